package io.sluice.qa;

import io.sluice.qa.cluster.Await;
import io.sluice.qa.cluster.ExportedRecord;
import io.sluice.qa.cluster.HttpAnswer;
import io.sluice.qa.cluster.QaRun;
import io.sluice.qa.cluster.RecordToWrite;
import io.sluice.qa.cluster.SluiceCluster;
import io.sluice.qa.cluster.WrittenRecord;
import io.sluice.testing.TmpfsVolume;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Issue 27: a full disk is a state Sluice handles. Three broker JVMs, each data directory on its own small tmpfs
 * volume made by the test (root only; skipped otherwise), exports paused, records written until the volumes fill.
 */
@Timeout(value = 10, unit = TimeUnit.MINUTES)
@LongRunning(seconds = 105)
class FullDiskIT
{
    private static final int BROKERS = 3;
    private static final String VOLUME_SIZE = "64m";
    private static final String PAYLOAD = "{\"text\":\"" + "x".repeat(900) + "\"}";

    @RegisterExtension
    static final QaRun RUN = new QaRun();

    @Test
    void pastTheWatermarkAppendsAnswer507AndAResumeFreesTheDiskWithoutARestart() throws Exception
    {
        final SluiceCluster cluster = RUN.cluster("watermark", builder -> builder
            .brokers(BROKERS).partitions(2).replicationFactor(3)
            .requestTimeout(Duration.ofSeconds(5))
            .brokerProperty("sluice.broker.segment-size", "1MB")
            .brokerProperty("sluice.broker.disk.high-watermark", "0.5")
            .brokerProperty("sluice.broker.disk.free-space-reserve", "0"));
        final List<Path> volumes = mountVolumes(cluster);
        try
        {
            cluster.start();
            cluster.awaitReady();
            cluster.awaitLeaders();
            assertThat(cluster.client().pause().http().status()).isEqualTo(200);

            final List<WrittenRecord> acknowledged = new ArrayList<>();
            final HttpAnswer refused = writeUntilRefused(cluster, acknowledged, "w");
            assertThat(refused.status()).as(refused.toString()).isEqualTo(507);
            assertThat(refused.json().path("error").asString()).isEqualTo("disk-full");
            assertThat(refused.json().path("message").asString())
                .matches("broker \\d: \\d+% of .*broker-\\d's volume used.*");
            cluster.log("appends refused after " + acknowledged.size() + " records: " + refused.body());

            // Everything but appends answers on the full disk.
            assertThat(cluster.client().exporting().http().status()).isEqualTo(200);
            final HttpAnswer metrics = cluster.client().get("/actuator/prometheus");
            assertThat(metrics.status()).isEqualTo(200);
            // Past the 0.5 watermark a moment ago; the snapshot taken past it may have compacted a segment since.
            assertThat(metric(metrics.body(), "sluice_broker_disk_used_ratio")).isGreaterThan(0.3);
            assertThat(metric(metrics.body(), "sluice_broker_disk_free_bytes")).isPositive();
            Await.until("appends refused counted", Duration.ofSeconds(30), () ->
                metric(cluster.client().get("/actuator/prometheus").body(), "sluice_broker_appends_refused_disk_total") >= 1);

            assertThat(cluster.client().resume().http().status()).isEqualTo(200);
            Await.until("appends taken again after the resume compacted the log", SluiceCluster.scaled(Duration.ofMinutes(3)), () ->
            {
                final HttpAnswer answer = cluster.client().postRecords("[" + json("after") + "]");
                return answer.status() == 200;
            });
            assertEveryAcknowledgedRecordExported(cluster, acknowledged);
        }
        finally
        {
            cluster.close();
            unmount(volumes);
        }
    }

    @Test
    void aVolumeFilledBySomethingElseKillsNoBrokerLosesNoAcknowledgedRecordAndAppendsGoOnOnceFreed() throws Exception
    {
        final SluiceCluster cluster = RUN.cluster("filled", builder -> builder
            .brokers(BROKERS).partitions(2).replicationFactor(3)
            .requestTimeout(Duration.ofSeconds(5))
            .brokerProperty("sluice.broker.segment-size", "1MB")
            .brokerProperty("sluice.broker.disk.high-watermark", "1.0")
            .brokerProperty("sluice.broker.disk.free-space-reserve", "0"));
        final List<Path> volumes = mountVolumes(cluster);
        try
        {
            cluster.start();
            cluster.awaitReady();
            cluster.awaitLeaders();
            final List<WrittenRecord> acknowledged = new ArrayList<>();
            writeFor(cluster, acknowledged, "before", Duration.ofSeconds(3));

            final List<Path> fillers = new ArrayList<>();
            for (final Path volume : volumes)
            {
                fillers.add(fill(volume, "filler"));
            }
            // Something else goes on writing: it takes the headroom each broker released when its disk filled too, so
            // the next write of Raft's own log (the new term's first entry after the kill below) finds no space.
            for (int b = 0; b < BROKERS; b++)
            {
                final Path headroom = volumes.get(b).resolve("disk-headroom");
                Await.until("broker " + b + " released its headroom", Duration.ofSeconds(30), () -> !Files.exists(headroom));
                fillers.add(fill(volumes.get(b), "filler-after-headroom"));
            }
            final int answered507 = writeFor(cluster, acknowledged, "full", Duration.ofSeconds(15));
            cluster.log("on the full volumes: " + answered507 + " answers 507, " + acknowledged.size() + " acknowledged");
            for (int b = 0; b < BROKERS; b++)
            {
                assertThat(cluster.isBrokerRunning(b)).as("broker " + b + " runs on its full disk").isTrue();
            }
            assertThat(cluster.client().exporting().http().status()).isEqualTo(200);

            // A broker restarted on the filled volume starts and answers (the headroom it released is all it has).
            cluster.restartBroker(0);
            cluster.awaitBrokerAvailable(0);
            assertThat(cluster.isBrokerRunning(0)).as("broker 0 runs after a restart on its filled volume").isTrue();

            for (final Path filler : fillers)
            {
                Files.delete(filler);
            }
            Await.until("appends taken again on every partition once the disk has room",
                SluiceCluster.scaled(Duration.ofMinutes(2)), () -> takenOnEveryPartition(cluster, "freed"));
            assertEveryAcknowledgedRecordExported(cluster, acknowledged);

            // Every segment passes its check on a restart (a corrupt sealed one would stop the broker).
            for (int b = 0; b < BROKERS; b++)
            {
                cluster.restartBroker(b);
            }
            cluster.awaitReady();
            cluster.awaitLeaders();
            Await.until("appends taken on every partition after the restart", SluiceCluster.scaled(Duration.ofMinutes(2)),
                () -> takenOnEveryPartition(cluster, "restarted"));
            assertEveryAcknowledgedRecordExported(cluster, acknowledged);
        }
        finally
        {
            cluster.close();
            unmount(volumes);
        }
    }

    /**
     * Whether a batch whose keys spread over every partition is acknowledged whole: a partition whose leader cannot
     * commit (its Raft log failed on the full disk) fails it.
     */
    private static boolean takenOnEveryPartition(final SluiceCluster cluster, final String prefix)
    {
        final StringBuilder body = new StringBuilder("[");
        for (int i = 0; i < 20; i++)
        {
            body.append(i == 0 ? "" : ",").append(json(prefix + "-" + System.nanoTime() + "-" + i));
        }
        final HttpAnswer answer = cluster.client().postRecords(body.append(']').toString());
        if (answer.status() != 200)
        {
            return false;
        }
        final Set<Integer> partitions = new HashSet<>();
        answer.json().forEach((outcome) -> partitions.add(outcome.path("partitionId").asInt()));
        return partitions.size() == cluster.partitionCount();
    }

    /** Writes batches for {@code duration}, keeping what is acknowledged; returns how many answered 507. */
    private static int writeFor(
        final SluiceCluster cluster, final List<WrittenRecord> acknowledged, final String prefix, final Duration duration)
    {
        final long deadline = System.nanoTime() + duration.toNanos();
        int seq = 0;
        int refused = 0;
        while (System.nanoTime() - deadline < 0)
        {
            final List<String> keys = new ArrayList<>();
            final StringBuilder body = new StringBuilder("[");
            for (int i = 0; i < 50; i++, seq++)
            {
                keys.add(prefix + seq);
                body.append(i == 0 ? "" : ",").append(json(prefix + seq));
            }
            final HttpAnswer answer = cluster.client().postRecords(body.append(']').toString());
            if (answer.status() == 200)
            {
                for (int i = 0; i < keys.size(); i++)
                {
                    acknowledged.add(new WrittenRecord(keys.get(i), PAYLOAD,
                        answer.json().get(i).path("partitionId").asInt(), answer.json().get(i).path("position").asLong()));
                }
            }
            else if (answer.status() == 507)
            {
                refused++;
                Await.sleep(Duration.ofMillis(100));
            }
        }
        return refused;
    }

    /** Fills the volume with a plain file {@code name} until the disk refuses more; returns the file. */
    private static Path fill(final Path volume, final String name) throws IOException
    {
        final Path filler = volume.resolve(name);
        final byte[] block = new byte[64 * 1024];
        try (java.io.OutputStream out = Files.newOutputStream(filler))
        {
            while (true)
            {
                out.write(block);
            }
        }
        catch (final IOException full)
        {
            assertThat(full.getMessage()).contains("No space left on device");
        }
        return filler;
    }

    private static HttpAnswer writeUntilRefused(
        final SluiceCluster cluster, final List<WrittenRecord> acknowledged, final String prefix)
    {
        final long deadline = System.nanoTime() + SluiceCluster.scaled(Duration.ofMinutes(4)).toNanos();
        int seq = 0;
        while (System.nanoTime() - deadline < 0)
        {
            final List<RecordToWrite> batch = new ArrayList<>();
            final StringBuilder body = new StringBuilder("[");
            for (int i = 0; i < 50; i++, seq++)
            {
                final RecordToWrite record = new RecordToWrite(prefix + seq, PAYLOAD);
                batch.add(record);
                body.append(i == 0 ? "" : ",").append(json(record.key()));
            }
            final HttpAnswer answer = cluster.client().postRecords(body.append(']').toString());
            if (answer.status() == 200)
            {
                for (int i = 0; i < batch.size(); i++)
                {
                    acknowledged.add(new WrittenRecord(batch.get(i).key(), PAYLOAD,
                        answer.json().get(i).path("partitionId").asInt(), answer.json().get(i).path("position").asLong()));
                }
            }
            else if (answer.status() == 507)
            {
                return answer;
            }
            else if (answer.status() != 503)
            {
                throw new AssertionError("unexpected answer while filling the disk: " + answer);
            }
        }
        throw new AssertionError("the disk never filled: " + acknowledged.size() + " records acknowledged");
    }

    private static void assertEveryAcknowledgedRecordExported(
        final SluiceCluster cluster, final List<WrittenRecord> acknowledged)
    {
        Await.until("every acknowledged record exported", SluiceCluster.scaled(Duration.ofMinutes(2)), () ->
        {
            final Set<String> exported = new HashSet<>();
            for (int p = 1; p <= cluster.partitionCount(); p++)
            {
                for (final ExportedRecord record : cluster.exportedRecords(p))
                {
                    exported.add(record.partitionId() + ":" + record.position() + ":" + record.key());
                }
            }
            for (final WrittenRecord record : acknowledged)
            {
                if (!exported.contains(record.partitionId() + ":" + record.position() + ":" + record.key()))
                {
                    return false;
                }
            }
            return true;
        });
    }

    private static String json(final String key)
    {
        return "{\"key\":\"" + key + "\",\"payload\":" + PAYLOAD + "}";
    }

    /** The highest value of a metric over its series; NaN when there is none. */
    private static double metric(final String scrape, final String name)
    {
        final Matcher matcher = Pattern.compile("(?m)^" + name + "\\{[^}]*} (\\S+)$").matcher(scrape);
        double max = Double.NaN;
        while (matcher.find())
        {
            final double value = Double.parseDouble(matcher.group(1));
            max = Double.isNaN(max) ? value : Math.max(max, value);
        }
        return max;
    }

    /** A tmpfs of {@link #VOLUME_SIZE} on each broker's data directory; skips the test where mount is not allowed. */
    static List<Path> mountVolumes(final SluiceCluster cluster) throws IOException, InterruptedException
    {
        final List<Path> mounted = new ArrayList<>();
        for (int b = 0; b < BROKERS; b++)
        {
            final Path dir = Files.createDirectories(cluster.brokerDataDirectory(b));
            final int exit = TmpfsVolume.mount(dir, VOLUME_SIZE);
            if (exit != 0)
            {
                unmount(mounted);
                Assumptions.abort("cannot mount a tmpfs here (mount exited " + exit + "; needs root): a small " +
                    "volume per broker is what this test is about");
            }
            mounted.add(dir);
        }
        return mounted;
    }

    static void unmount(final List<Path> mounted) throws IOException, InterruptedException
    {
        for (final Path dir : mounted)
        {
            TmpfsVolume.unmount(dir);
        }
    }
}
