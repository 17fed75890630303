package io.sluice.qa.chaos;

import io.sluice.qa.LongRunning;
import io.sluice.qa.cluster.QaRun;
import io.sluice.qa.network.NetworkLab;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.nio.file.Files;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Issue 31 in CI: a few seeds of about a minute each, every promise of the contract checked on the history of a
 * cluster whose brokers and gateway sit on hosts of their own while the nemesis partitions, cuts one way, kills and
 * stops them. Each seed writes its report (qa/target/qa-runs/NetworkPartitionsIT/seed-N/report.json) and must name
 * the faults injected and the operations checked. A failing seed replays with {@code bash qa/chaos.sh --seconds 60
 * --seed N}; seeds that found product bugs stay here as regression runs.
 */
@Timeout(value = 6, unit = TimeUnit.MINUTES)
@LongRunning(seconds = 170)
class NetworkPartitionsIT
{
    private static final Duration RUN = Duration.ofSeconds(60);

    @RegisterExtension
    static final QaRun QA = new QaRun();

    @ParameterizedTest(name = "seed {0}")
    // seed 2 draws partitions, a gateway cut, a kill, one-way loss and a SIGSTOP; seed 22 partitions and latency
    @ValueSource(longs = {2, 22})
    void everyPromiseHoldsUnderTheNemesis(final long seed) throws Exception
    {
        final var reason = NetworkLab.unavailableReason();
        Assumptions.assumeTrue(reason.isEmpty(), () -> "skipped: " + reason.orElse(""));

        final ChaosReport report = ChaosRun.run(seed, RUN, QA.directory().resolve("seed-" + seed));

        assertThat(QA.directory().resolve("seed-" + seed).resolve("report.json")).exists();
        assertThat(Files.readString(QA.directory().resolve("seed-" + seed).resolve("timeline.svg"))).startsWith("<svg");
        assertThat(report.faults().values().stream().mapToInt(Integer::intValue).sum()).as("faults injected").isPositive();
        assertThat(report.operations()).as("operations checked").containsKeys("append", "status")
            .allSatisfy((kind, count) -> assertThat(count).isPositive());
        assertThat(report.exportedLines()).as("exported lines read").isPositive();
        assertThat(report.verdicts()).as(report.summary()).allMatch(Verdict::holds);
    }
}
