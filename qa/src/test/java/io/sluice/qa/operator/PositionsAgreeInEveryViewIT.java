package io.sluice.qa.operator;

import io.sluice.qa.Records;
import io.sluice.qa.SharedCluster;
import io.sluice.qa.cluster.Await;
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
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Issue 29, one meaning of "position": during a soft pause, with records written and sent to the sink, every view of
 * the shared cluster (separate JVMs) shows the same acknowledged position per partition of the exporter {@code file}
 * — {@code GET /actuator/exporting} ({@code exportedPosition} of the leader pair), {@code GET /actuator/exporters}
 * ({@code position}), the metric {@code sluice_exporter_position} and {@code admin exporting status} (POSITION) —
 * and the same sent position ahead of it (SENT, {@code sentPosition}, {@code sluice_exporter_sent_position}); after
 * the resume they meet at the partition's last position.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(value = 6, unit = TimeUnit.MINUTES)
@Execution(ExecutionMode.SAME_THREAD)
class PositionsAgreeInEveryViewIT
{
    private static final String TOKEN = SharedCluster.TOKEN;
    /** The metrics are polled (every 5 s and 10 s by default): generous for a loaded machine. */
    private static final Duration AGREE_TIMEOUT = SluiceCluster.scaled(Duration.ofSeconds(90));
    private static final Pattern METRIC = Pattern.compile(
        "(?m)^sluice_exporter_(position|sent_position)\\{exporter=\"file\",partition=\"(\\d+)\"} (\\S+)$");
    /** A leader row of the status table: PAIR ROLE STATE POSITION SENT LAST LAG SENT LAG. */
    private static final Pattern LEADER_ROW =
        Pattern.compile("(?m)^(\\d+):(\\d+)\\s+LEADER\\s+\\S+\\s+(\\d+)\\s+(\\d+)\\s+(\\d+)\\s+\\d+\\s+\\d+\\s*$");

    @RegisterExtension
    static final QaRun RUN = new QaRun();
    @RegisterExtension
    static final SharedCluster SHARED = new SharedCluster();

    private SluiceCluster cluster;
    private Path cliFolder;

    @BeforeAll
    void startCluster()
    {
        cluster = SHARED.cluster();
        cliFolder = RUN.directory().resolve("cli");
    }

    @AfterAll
    void resume()
    {
        if (cluster != null && cluster.gateway().isAlive())
        {
            cluster.log("resume at the end: " + cluster.client().resume());
        }
    }

    @Test
    void duringASoftPauseEveryViewShowsTheSameAcknowledgedAndSentPositionsAndAfterResumeTheyMeet()
    {
        Records.awaitExported(cluster, Records.write(cluster, "positions-before", 60));
        assertThat(cluster.client().softPause().status()).isEqualTo(200);
        final List<WrittenRecord> whileSoftPaused = Records.write(cluster, "positions-soft-paused", 120);
        Records.awaitExported(cluster, whileSoftPaused); // the sink gets them: only acknowledgements are held
        final Map<Integer, Long> last = new TreeMap<>();
        whileSoftPaused.forEach(r -> last.merge(r.partitionId(), r.position(), Math::max));

        final Views held = awaitAgreement("soft pause", last, false);
        for (final Map.Entry<Integer, Long> partition : last.entrySet())
        {
            assertThat(held.acknowledged.get(partition.getKey())).as("partition %s held back: %s", partition.getKey(), held)
                .isLessThan(partition.getValue());
        }

        assertThat(cluster.client().resume().status()).isEqualTo(200);
        awaitAgreement("after resume", last, true);
    }

    /**
     * Waits (bounded) until every view agrees per partition: one acknowledged position, one sent position, the sent
     * one at the last written position (the sink has every record), and, when {@code met}, the acknowledged one too.
     */
    private Views awaitAgreement(final String when, final Map<Integer, Long> last, final boolean met)
    {
        final Views[] seen = new Views[1];
        Await.until(when + ": every view shows the same positions", AGREE_TIMEOUT, () ->
        {
            seen[0] = Views.read(cluster, cliFolder);
            return seen[0].agree(last, met);
        }, () -> "last seen: " + seen[0]);
        return seen[0];
    }

    /** The positions of the exporter {@code file} per partition as one read of each view shows them. */
    private record Views(Map<Integer, Long> acknowledged, Map<Integer, List<Long>> acknowledgedByView,
                         Map<Integer, List<Long>> sentByView, String cliTable)
    {
        static Views read(final SluiceCluster cluster, final Path cliFolder)
        {
            final Map<Integer, List<Long>> acknowledged = new TreeMap<>();
            final Map<Integer, List<Long>> sent = new TreeMap<>();
            final JsonNode status = cluster.client().get("/actuator/exporting").json();
            for (final JsonNode pair : status.path("targets"))
            {
                if ("LEADER".equals(pair.path("role").asString()))
                {
                    final int partitionId = pair.path("partitionId").asInt();
                    add(acknowledged, partitionId, pair.path("exportedPosition").asLong(-1));
                    add(sent, partitionId, pair.path("sentPosition").isNumber() ? pair.path("sentPosition").asLong() : -1);
                }
            }
            for (final JsonNode exporter : cluster.client().get("/actuator/exporters").json().path("exporters"))
            {
                if ("file".equals(exporter.path("id").asString()))
                {
                    for (final JsonNode partition : exporter.path("partitions"))
                    {
                        add(acknowledged, partition.path("partitionId").asInt(), partition.path("position").asLong(-1));
                        add(sent, partition.path("partitionId").asInt(), partition.path("sentPosition").asLong(-1));
                    }
                }
            }
            final Matcher metric = METRIC.matcher(cluster.client().get("/actuator/prometheus").body());
            while (metric.find())
            {
                add(metric.group(1).equals("position") ? acknowledged : sent, Integer.parseInt(metric.group(2)),
                    (long)Double.parseDouble(metric.group(3)));
            }
            final CliResult cli = AdminCliProcess.run(cliFolder, "exporting", "status",
                "--gateway", cluster.client().managementBase().toString(), "--token", TOKEN);
            final Matcher row = LEADER_ROW.matcher(cli.stdout());
            while (row.find())
            {
                add(acknowledged, Integer.parseInt(row.group(2)), Long.parseLong(row.group(3)));
                add(sent, Integer.parseInt(row.group(2)), Long.parseLong(row.group(4)));
            }
            final Map<Integer, Long> first = new TreeMap<>();
            acknowledged.forEach((partitionId, values) -> first.put(partitionId, values.get(0)));
            return new Views(first, acknowledged, sent, cli.stdout());
        }

        private static void add(final Map<Integer, List<Long>> views, final int partitionId, final long position)
        {
            views.computeIfAbsent(partitionId, id -> new ArrayList<>()).add(position);
        }

        /** Four views each (status, exporters view, metric, CLI) and one value among them per partition. */
        boolean agree(final Map<Integer, Long> last, final boolean met)
        {
            for (final Map.Entry<Integer, Long> partition : last.entrySet())
            {
                final List<Long> acked = acknowledgedByView.getOrDefault(partition.getKey(), List.of());
                final List<Long> sentNow = sentByView.getOrDefault(partition.getKey(), List.of());
                if (acked.size() != 4 || sentNow.size() != 4 || acked.stream().distinct().count() != 1 ||
                    sentNow.stream().distinct().count() != 1 || sentNow.get(0) != (long)partition.getValue() ||
                    sentNow.get(0) < acked.get(0) || met && acked.get(0) != (long)partition.getValue())
                {
                    return false;
                }
            }
            return true;
        }

        @Override
        public String toString()
        {
            return "acknowledged (status, exporters, metric, cli) " + acknowledgedByView + ", sent " + sentByView +
                "; admin exporting status:\n" + cliTable;
        }
    }
}
