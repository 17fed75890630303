package io.sluice.gateway.backup;

import io.sluice.exporter.spi.CommittedRecord;
import io.sluice.exporter.spi.Exporter;
import io.sluice.exporter.spi.ExporterContext;
import io.sluice.exporter.spi.ExporterController;
import io.sluice.exporter.spi.ExporterFactory;
import io.sluice.exporter.spi.SinkSnapshots;

import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * An exporter kind for the cluster tests of backups ({@code type=gated-snapshots}): one in-memory sink for the whole
 * JVM (the brokers of a test share it, as they would a search cluster), acknowledging each record once it holds it,
 * and taking snapshots that copy what it holds. A snapshot waits at a gate the test opens, so the test acts while a
 * backup's hold is in place; {@link #snapshotState} makes the sink refuse snapshots; {@link #hangExports} makes its
 * writes of one partition hang, as a slow sink's do.
 */
public final class GatedSnapshotSink implements ExporterFactory
{
    static final String TYPE = "gated-snapshots";

    /** What the sink holds: partition to positions. */
    static final Map<Integer, Set<Long>> SINK = new ConcurrentHashMap<>();
    /** Snapshots by name: partition to positions, as the sink held them when taken. */
    static final Map<String, Map<Integer, Set<Long>>> SNAPSHOTS = new ConcurrentHashMap<>();
    static volatile CountDownLatch snapshotStarted = new CountDownLatch(1);
    static volatile CountDownLatch gate = new CountDownLatch(0);
    static volatile String snapshotState = SinkSnapshots.SUCCESS;
    /** Shut, every export of {@link #hangingPartition} waits at it (at most a minute): a sink write that hangs. */
    static volatile CountDownLatch exportGate = new CountDownLatch(0);
    static volatile int hangingPartition;
    static volatile CountDownLatch exportHanging = new CountDownLatch(1);

    /** Makes every export of {@code partitionId} hang until {@link #exportGate} opens. */
    static void hangExports(final int partitionId)
    {
        hangingPartition = partitionId;
        exportHanging = new CountDownLatch(1);
        exportGate = new CountDownLatch(1);
    }

    static void reset()
    {
        SINK.clear();
        SNAPSHOTS.clear();
        snapshotStarted = new CountDownLatch(1);
        gate = new CountDownLatch(0);
        snapshotState = SinkSnapshots.SUCCESS;
        exportGate.countDown();
        exportGate = new CountDownLatch(0);
    }

    static Set<Long> held(final int partitionId)
    {
        return new TreeSet<>(SINK.getOrDefault(partitionId, Set.of()));
    }

    @Override
    public String type()
    {
        return TYPE;
    }

    @Override
    public Exporter create()
    {
        return new Exporter()
        {
            private int partitionId;
            private ExporterController controller;

            @Override
            public void configure(final ExporterContext context)
            {
                partitionId = context.partitionId();
            }

            @Override
            public void open(final ExporterController controller)
            {
                this.controller = controller;
            }

            @Override
            public void export(final CommittedRecord record) throws InterruptedException
            {
                final CountDownLatch hang = exportGate;
                if (partitionId == hangingPartition && hang.getCount() > 0)
                {
                    exportHanging.countDown();
                    hang.await(1, TimeUnit.MINUTES);
                }
                SINK.computeIfAbsent(partitionId, (p) -> ConcurrentHashMap.newKeySet()).add(record.position());
                controller.acknowledge(record.position());
            }

            @Override
            public void close()
            {
            }

            @Override
            public SinkSnapshots snapshots()
            {
                return new Snapshots();
            }
        };
    }

    private static final class Snapshots implements SinkSnapshots
    {
        @Override
        public Snapshot take(final String name, final long timeoutMillis) throws InterruptedException
        {
            snapshotStarted.countDown();
            if (!gate.await(timeoutMillis, TimeUnit.MILLISECONDS))
            {
                return new Snapshot(name, "FAILED", "the test's gate stayed shut");
            }
            if (!SUCCESS.equals(snapshotState))
            {
                return new Snapshot(name, snapshotState, "refused by the test's sink");
            }
            final Map<Integer, Set<Long>> copy = new TreeMap<>();
            SINK.forEach((p, positions) -> copy.put(p, new TreeSet<>(positions)));
            SNAPSHOTS.put(name, copy);
            return new Snapshot(name, SUCCESS, "in memory");
        }

        @Override
        public Snapshot check(final String name, final long timeoutMillis)
        {
            return new Snapshot(name, SNAPSHOTS.containsKey(name) ? SUCCESS : MISSING, "in memory");
        }

        @Override
        public void restore(final String name, final long timeoutMillis)
        {
            final Map<Integer, Set<Long>> snapshot = SNAPSHOTS.get(name);
            if (snapshot == null)
            {
                throw new IllegalStateException("no snapshot " + name);
            }
            SINK.clear();
            snapshot.forEach((p, positions) -> SINK.put(p, ConcurrentHashMap.newKeySet()));
            snapshot.forEach((p, positions) -> SINK.get(p).addAll(positions));
        }

        @Override
        public void close()
        {
        }
    }
}
