package io.sluice.qa.cluster;

import java.time.Duration;
import java.time.Instant;
import java.time.LocalTime;
import java.time.ZoneId;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Writers sending through the gateway until stopped, each waiting for its answer before the next write: one record
 * a write, or a batch whose keys span partitions. Records what was acknowledged, what failed, and when each writer's
 * writes were acknowledged, so the gaps a fault makes in the stream can be measured.
 */
public final class WriteLoad implements AutoCloseable
{
    private final ConcurrentLinkedQueue<WrittenRecord> acknowledged = new ConcurrentLinkedQueue<>();
    private final ConcurrentLinkedQueue<Failure> failures = new ConcurrentLinkedQueue<>();
    private final AtomicBoolean running = new AtomicBoolean(true);
    private final ExecutorService pool;
    private final List<Future<List<Long>>> writers = new ArrayList<>();
    private final List<List<Long>> ackTimes = new ArrayList<>();

    /**
     * @param batchSize records a write (1: single-record writes); a batch's keys differ, so it spans partitions.
     * @param pause     how long a writer waits after an acknowledged write (zero: none).
     * @param bound     writers stop by themselves after this, whatever happens.
     */
    public WriteLoad(final SluiceCluster cluster, final String name, final int writerCount, final int batchSize,
        final Duration pause, final Duration bound)
    {
        pool = Executors.newFixedThreadPool(writerCount);
        final long deadline = System.nanoTime() + bound.toNanos();
        for (int w = 0; w < writerCount; w++)
        {
            final int writer = w;
            writers.add(pool.submit(() ->
            {
                final List<Long> times = new ArrayList<>();
                int seq = 0;
                while (running.get() && System.nanoTime() - deadline < 0)
                {
                    final String key = name + "-w" + writer + "-" + seq;
                    final long sentAtMillis = System.currentTimeMillis();
                    try
                    {
                        if (batchSize == 1)
                        {
                            acknowledged.add(cluster.client().write(key, payload(writer, seq, 0)));
                        }
                        else
                        {
                            final List<RecordToWrite> batch = new ArrayList<>(batchSize);
                            for (int i = 0; i < batchSize; i++)
                            {
                                batch.add(new RecordToWrite(key + "-" + i, payload(writer, seq, i)));
                            }
                            acknowledged.addAll(cluster.client().writeBatch(batch));
                        }
                        times.add(System.currentTimeMillis());
                        if (!pause.isZero())
                        {
                            Await.sleep(pause);
                        }
                    }
                    catch (final GatewayException e)
                    {
                        failures.add(new Failure(sentAtMillis, key + ": " + e.getMessage()));
                    }
                    seq++;
                }
                return times;
            }));
        }
    }

    private static String payload(final int writer, final int seq, final int item)
    {
        return "{\"writer\":" + writer + ",\"seq\":" + seq + ",\"item\":" + item + "}";
    }

    /** Stops the writers and waits for their last writes. */
    public void stop() throws Exception
    {
        running.set(false);
        for (final Future<List<Long>> writer : writers)
        {
            ackTimes.add(writer.get(2, TimeUnit.MINUTES));
        }
        pool.shutdown();
    }

    public List<WrittenRecord> acknowledged()
    {
        return List.copyOf(acknowledged);
    }

    /** Every failed write, as "key: why". */
    public List<String> failures()
    {
        return failures.stream().map(Failure::description).toList();
    }

    /** The failed writes sent (epoch ms) at or after {@code fromMillis} and before {@code toMillis}. */
    public List<String> failuresSentBetween(final long fromMillis, final long toMillis)
    {
        return failures.stream()
            .filter(failure -> failure.sentAtMillis() >= fromMillis && failure.sentAtMillis() < toMillis)
            .map(Failure::description)
            .toList();
    }

    /** A failed write: when it was sent, and what its answer was. */
    private record Failure(long sentAtMillis, String description)
    {
    }

    /** Acknowledged writes (a batch counts once), after {@link #stop}. */
    public int writes()
    {
        return ackTimes.stream().mapToInt(List::size).sum();
    }

    /** Every gap between two acknowledged writes of one writer, in ms, sorted; after {@link #stop}. */
    public long[] gapsMs()
    {
        final List<Long> gaps = new ArrayList<>();
        for (final List<Long> times : ackTimes)
        {
            for (int i = 1; i < times.size(); i++)
            {
                gaps.add(times.get(i) - times.get(i - 1));
            }
        }
        return gaps.stream().mapToLong(Long::longValue).sorted().toArray();
    }

    public long longestGapMs()
    {
        final long[] gaps = gapsMs();
        return gaps.length == 0 ? 0 : gaps[gaps.length - 1];
    }

    /** The gap at quantile {@code q} (0..1) by the nearest rank. */
    public long gapQuantileMs(final double q)
    {
        final long[] gaps = gapsMs();
        if (gaps.length == 0)
        {
            return 0;
        }
        final int rank = (int)Math.ceil(q * gaps.length) - 1;
        return gaps[Math.max(0, Math.min(gaps.length - 1, rank))];
    }

    /** The gaps of one writer over {@code thresholdMs}, as "HH:mm:ss.SSS after N ms", to match the logs. */
    public List<String> longGaps(final long thresholdMs)
    {
        final List<String> gaps = new ArrayList<>();
        for (final List<Long> times : ackTimes)
        {
            for (int i = 1; i < times.size(); i++)
            {
                final long gap = times.get(i) - times.get(i - 1);
                if (gap > thresholdMs)
                {
                    gaps.add(LocalTime.ofInstant(Instant.ofEpochMilli(times.get(i)), ZoneId.systemDefault()) +
                        " after " + gap + " ms");
                }
            }
        }
        return gaps;
    }

    @Override
    public void close()
    {
        running.set(false);
        pool.shutdownNow();
    }
}
