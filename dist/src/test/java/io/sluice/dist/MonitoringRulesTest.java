package io.sluice.dist;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The shipped alerting rules pass {@code promtool check rules} and their unit tests {@code promtool test rules}
 * (Debian's {@code prometheus} package ships promtool; .ci/run installs it). Skipped, saying why, without promtool.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class MonitoringRulesTest
{
    private static final Path MONITORING = Path.of("monitoring");

    @Test
    void theAlertingRulesAreValid() throws Exception
    {
        final Result result = promtool("check", "rules", "sluice-alerts.yml");

        assertThat(result.exitCode()).as(result.output()).isZero();
        assertThat(result.output()).contains("SUCCESS");
    }

    @Test
    void everyAlertPassesItsUnitTests() throws Exception
    {
        final Result result = promtool("test", "rules", "sluice-alerts.test.yml");

        assertThat(result.exitCode()).as(result.output()).isZero();
        assertThat(result.output()).contains("SUCCESS");
    }

    private record Result(int exitCode, String output)
    {
    }

    private static Result promtool(final String... args) throws Exception
    {
        final String promtool = findPromtool();
        assumeTrue(promtool != null, "promtool is not installed (apt-get install prometheus; .ci/run does)");
        final List<String> command = new java.util.ArrayList<>(List.of(promtool));
        command.addAll(List.of(args));
        final Process process = new ProcessBuilder(command).directory(MONITORING.toFile()).redirectErrorStream(true).start();
        final String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(process.waitFor(60, TimeUnit.SECONDS)).as("promtool ended").isTrue();
        return new Result(process.exitValue(), output);
    }

    private static String findPromtool()
    {
        for (final String dir : System.getenv().getOrDefault("PATH", "/usr/bin").split(File.pathSeparator))
        {
            final File candidate = new File(dir, "promtool");
            if (candidate.canExecute())
            {
                return candidate.getPath();
            }
        }
        return null;
    }
}
