package io.sluice.testing;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

@Timeout(value = 1, unit = TimeUnit.MINUTES)
class LoopbackPortsTest
{
    private static final int PORTS = 300;

    @Test
    void aPortReservedByAnotherJvmIsNotHandedOutHere() throws Exception
    {
        final Process other = new ProcessBuilder(
            Path.of(System.getProperty("java.home"), "bin", "java").toString(),
            "-cp", System.getProperty("java.class.path"),
            ReservingJvm.class.getName(), Integer.toString(PORTS))
            .redirectError(ProcessBuilder.Redirect.INHERIT)
            .start();
        try
        {
            final Set<Integer> theirs = new HashSet<>();
            final BufferedReader lines = new BufferedReader(
                new InputStreamReader(other.getInputStream(), StandardCharsets.US_ASCII));
            for (int i = 0; i < PORTS; i++)
            {
                theirs.add(Integer.parseInt(lines.readLine()));
            }
            // 300 random picks each from ~12,600 ports: without the reservation they would share one almost surely
            final Set<Integer> ours = new HashSet<>();
            for (int i = 0; i < PORTS; i++)
            {
                ours.add(LoopbackPorts.freePort());
            }
            assertThat(ours).hasSize(PORTS).doesNotContainAnyElementsOf(theirs);
        }
        finally
        {
            other.destroyForcibly().waitFor();
        }
    }

    @Test
    void aPairIsTwoNeighbouringBindablePortsOutsideTheStandaloneDefaults()
    {
        for (int i = 0; i < 50; i++)
        {
            final int port = LoopbackPorts.freePortPair();
            assertThat(LoopbackPorts.isBindable(port)).isTrue();
            assertThat(LoopbackPorts.isBindable(port + 1)).isTrue();
            assertThat(port).isBetween(LoopbackPorts.LOW, LoopbackPorts.HIGH);
            assertThat(port + 1 < 26_500 || port >= 26_600).as("port %d away from the standalone defaults", port).isTrue();
        }
    }

    /** The other JVM: reserves ports, prints them, and holds them until it is killed. */
    public static final class ReservingJvm
    {
        public static void main(final String[] args) throws IOException, InterruptedException
        {
            for (int i = 0; i < Integer.parseInt(args[0]); i++)
            {
                System.out.println(LoopbackPorts.freePort());
            }
            System.out.flush();
            Thread.sleep(TimeUnit.MINUTES.toMillis(2));
        }
    }
}
