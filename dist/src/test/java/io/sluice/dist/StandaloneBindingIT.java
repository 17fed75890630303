package io.sluice.dist;

import io.sluice.gateway.LoopbackBrokers;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.core.env.Environment;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The standalone is a one-machine setup: both HTTP ports are bound to loopback unless an address is set, and a
 * management token does not move the management port. Asserted on the sockets the kernel reports, not on
 * the configuration.
 */
@Timeout(value = 4, unit = TimeUnit.MINUTES)
class StandaloneBindingIT
{
    private static final InetAddress LOOPBACK = InetAddress.getLoopbackAddress();

    @TempDir
    Path dataDir;

    @Test
    void withoutATokenBothPortsListenOnLoopbackOnly() throws Exception
    {
        final Bindings bindings = start();

        assertThat(bindings.client()).as("client API").containsOnly(LOOPBACK);
        assertThat(bindings.management()).as("management API").containsOnly(LOOPBACK);
    }

    @Test
    void aTokenDoesNotMoveEitherPortOffLoopback() throws Exception
    {
        final Bindings bindings = start("--sluice.management.token=secret");

        assertThat(bindings.client()).as("client API").containsOnly(LOOPBACK);
        assertThat(bindings.management()).as("management API").containsOnly(LOOPBACK);
    }

    @Test
    void anAddressThatIsSetIsTheOneBound() throws Exception
    {
        // Another loopback address, so this test listens on loopback only and still shows the setting is honoured.
        final InetAddress other = InetAddress.getByName("127.0.0.2");
        final Bindings bindings = start("--server.address=127.0.0.2", "--management.server.address=127.0.0.2");

        assertThat(bindings.client()).as("client API").containsOnly(other);
        assertThat(bindings.management()).as("management API").containsOnly(other);
    }

    /** Starts a one-broker standalone with {@code extra}, reads the addresses its two ports listen on, and stops it. */
    private Bindings start(final String... extra) throws IOException
    {
        final List<String> args = new ArrayList<>(List.of(
            "--sluice.data-dir=" + dataDir,
            "--sluice.cluster.brokers=" + LoopbackBrokers.brokerList(1),
            "--sluice.cluster.partitions=1",
            "--sluice.cluster.replication-factor=1",
            "--server.port=0",
            "--management.server.port=0"));
        args.addAll(List.of(extra));
        final ByteArrayOutputStream err = new ByteArrayOutputStream();
        final SluiceMain.Launch launch = SluiceMain.launch(args.toArray(String[]::new),
            new PrintStream(err, true, StandardCharsets.UTF_8));
        assertThat(launch.exitCode()).as(err.toString(StandardCharsets.UTF_8)).isEqualTo(SluiceMain.EXIT_OK);
        try
        {
            final Environment environment = launch.context().getEnvironment();
            final long pid = ProcessHandle.current().pid();
            return new Bindings(
                hosts(ListeningSockets.onPort(pid, environment.getRequiredProperty("local.server.port", Integer.class))),
                hosts(ListeningSockets.onPort(pid, environment.getRequiredProperty("local.management.port", Integer.class))));
        }
        finally
        {
            launch.context().close();
        }
    }

    private static List<InetAddress> hosts(final List<InetSocketAddress> sockets)
    {
        assertThat(sockets).as("a listening socket on the port").isNotEmpty();
        return sockets.stream().map(InetSocketAddress::getAddress).toList();
    }

    private record Bindings(List<InetAddress> client, List<InetAddress> management)
    {
    }
}
