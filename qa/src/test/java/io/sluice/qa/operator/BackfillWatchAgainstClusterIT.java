package io.sluice.qa.operator;

import io.sluice.qa.Exporting;
import io.sluice.qa.Records;
import io.sluice.qa.SharedCluster;
import io.sluice.qa.cluster.Json;
import io.sluice.qa.cluster.QaRun;
import io.sluice.qa.cluster.SluiceCluster;
import io.sluice.qa.cluster.WrittenRecord;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;
import tools.jackson.databind.JsonNode;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Issue 7: {@code admin backfill start} and {@code admin backfill status ID --watch} (separate CLI processes)
 * against a cluster of separate JVMs (3 brokers, 6 partitions, RF 3). Records written while exporting is paused
 * leave the file exporter behind; a reset to the latest positions hands that range to a backfill, which the
 * pause holds too, and which runs to SUCCEEDED once exporting resumes, exporting every one of those records.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(value = 6, unit = TimeUnit.MINUTES)
@Execution(ExecutionMode.SAME_THREAD)
class BackfillWatchAgainstClusterIT
{
    private static final String TOKEN = SharedCluster.TOKEN;
    private static final Duration WATCH_TIMEOUT = SluiceCluster.scaled(Duration.ofSeconds(180));

    @RegisterExtension
    static final QaRun RUN = new QaRun();
    @RegisterExtension
    static final SharedCluster SHARED = new SharedCluster();

    private SluiceCluster cluster;
    private Path cliFolder;

    @BeforeAll
    void startCluster()
    {
        cluster = SHARED.cluster(); // reset with every partition on its preferred leader, as backfill starts ask them
        cliFolder = RUN.directory().resolve("cli");
    }

    /** Whatever happened, no pause outlives the class (the cluster is killed next, but say so in its log). */
    @AfterAll
    void resume()
    {
        if (cluster != null && cluster.gateway().isAlive())
        {
            cluster.log("resume at the end: " + cluster.client().resume());
        }
    }

    @Test
    void backfillWatchFollowsABackfillToSucceeded()
    {
        Records.awaitExported(cluster, Records.write(cluster, "before-pause", 60));
        final CliResult pause = admin("exporting", "pause");
        assertThat(pause.exitCode()).as("%s", pause).isEqualTo(0);
        final List<WrittenRecord> lagging = Records.write(cluster, "lagging", 300);

        final CliResult dryRun = admin("backfill", "start", "file", "--dry-run");
        assertThat(dryRun.exitCode()).as("dry run of a backfill: %s", dryRun).isEqualTo(0);
        assertThat(dryRun.stdout()).as("%s", dryRun).contains("nothing changed");

        final CliResult start = admin("backfill", "start", "file", "--tasks", "4", "--output", "json");
        assertThat(start.exitCode()).as("%s", start).isEqualTo(0);
        final JsonNode plan = Json.parse(start.stdout());
        final String backfillId = plan.path("backfillId").asString("");
        assertThat(backfillId).as("%s", start).isNotBlank();
        final Set<Integer> partitionsWritten = new TreeSet<>();
        lagging.forEach(record -> partitionsWritten.add(record.partitionId()));
        final Set<Integer> partitionsPlanned = new TreeSet<>();
        plan.path("ranges").forEach(range -> partitionsPlanned.add(range.path("partitionId").asInt()));
        assertThat(partitionsPlanned).as("%s", start).containsAll(partitionsWritten);

        final AdminCliProcess watch = startAdmin("backfill", "status", backfillId, "--watch", "--interval", "500ms");
        final CliResult resume = admin("exporting", "resume");
        assertThat(resume.exitCode()).as("%s", resume).isEqualTo(0);
        final CliResult watched = watch.awaitExit(WATCH_TIMEOUT);

        assertThat(watched.exitCode()).as("%s", watched).isEqualTo(0);
        assertThat(watched.stdout()).as("%s", watched)
            .contains("100.0%")
            .contains("backfill " + backfillId + " SUCCEEDED");
        Records.awaitExported(cluster, lagging);
        Exporting.assertEveryPair(cluster, "EXPORTING");
    }

    /** Runs {@code admin args... --gateway <this cluster's> --token <its token>} to its end. */
    private CliResult admin(final String... args)
    {
        return startAdmin(args).awaitExit(AdminCliProcess.CALL_TIMEOUT);
    }

    private AdminCliProcess startAdmin(final String... args)
    {
        final List<String> all = new ArrayList<>(List.of(args));
        all.addAll(List.of("--gateway", cluster.client().managementBase().toString(), "--token", TOKEN));
        return AdminCliProcess.start(cliFolder, all.toArray(String[]::new));
    }
}
