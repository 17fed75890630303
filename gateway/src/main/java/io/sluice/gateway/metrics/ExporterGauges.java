package io.sluice.gateway.metrics;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.MultiGauge;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.binder.MeterBinder;
import io.sluice.gateway.exporters.ExportersService;
import io.sluice.gateway.exporters.PartitionExporters;
import io.sluice.protocol.cluster.ExporterStatus;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.stereotype.Component;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Per exporter and partition, from the partition leaders' exporters status (polled, one poll at a time, never
 * per scrape): {@code sluice_exporter_retrying} (1 while the sink is failing), {@code sluice_exporter_retries}
 * (failed attempts), {@code sluice_exporter_dead_letters}, {@code sluice_exporter_bulk_requests} and
 * {@code sluice_exporter_bulk_latency_seconds} (mean latency of the writes to the sink since the previous poll), and
 * {@code sluice_exporter_sent_position}: the last position sent to the sink, beside the acknowledged
 * {@link ExportingGauges#EXPORTER_POSITION} (ahead of it during a soft pause or while a bulk is in flight).
 * The leaders count per leadership term, so the counts restart from 0 after a leader change. The lag is
 * {@link ExportingGauges#EXPORTER_LAG}.
 */
@Component
public class ExporterGauges implements MeterBinder
{
    public static final String RETRYING = "sluice.exporter.retrying";
    public static final String RETRIES = "sluice.exporter.retries";
    public static final String DEAD_LETTERS = "sluice.exporter.dead.letters";
    public static final String BULK_REQUESTS = "sluice.exporter.bulk.requests";
    public static final String BULK_LATENCY = "sluice.exporter.bulk.latency.seconds";
    public static final String SENT_POSITION = "sluice.exporter.sent.position";

    private static final Logger LOG = LoggerFactory.getLogger(ExporterGauges.class);

    private final ObjectProvider<ExportersService> service;
    private final AtomicBoolean polling = new AtomicBoolean();
    /** The previous poll's write count and summed latency per series, for the latency since then. */
    private final Map<Tags, long[]> previousWrites = new HashMap<>();
    private final Map<Tags, Double> lastLatency = new HashMap<>();
    private volatile MultiGauge retrying;
    private volatile MultiGauge retries;
    private volatile MultiGauge deadLetters;
    private volatile MultiGauge bulkRequests;
    private volatile MultiGauge bulkLatency;
    private volatile MultiGauge sentPositions;

    public ExporterGauges(final ObjectProvider<ExportersService> service)
    {
        this.service = service;
    }

    @Override
    public void bindTo(final MeterRegistry registry)
    {
        retrying = MultiGauge.builder(RETRYING).description("1 while the exporter's sink is failing and retried")
            .register(registry);
        retries = MultiGauge.builder(RETRIES).description("Failed export attempts in the leader's current term")
            .register(registry);
        deadLetters = MultiGauge.builder(DEAD_LETTERS)
            .description("Records the sink rejected for good, written to the dead-letter file, in the leader's term")
            .register(registry);
        bulkRequests = MultiGauge.builder(BULK_REQUESTS).description("Writes (bulk requests) to the sink in the leader's term")
            .register(registry);
        bulkLatency = MultiGauge.builder(BULK_LATENCY).baseUnit("seconds")
            .description("Mean latency of the writes to the sink since the previous poll").register(registry);
        sentPositions = MultiGauge.builder(SENT_POSITION)
            .description("Last position sent to the sink, as the partition's leader reports it (sluice_exporter_position " +
                "is the acknowledged one)").register(registry);
    }

    /** Starts one poll unless one is still running or there is no exporters service. */
    public void poll(final Duration timeout)
    {
        final ExportersService exporters = service.getIfAvailable();
        if (exporters == null || retrying == null || !polling.compareAndSet(false, true))
        {
            return;
        }
        try
        {
            exporters.answers()
                .orTimeout(timeout.toMillis(), TimeUnit.MILLISECONDS)
                .whenComplete((answers, error) ->
                {
                    polling.set(false);
                    if (error != null)
                    {
                        LOG.debug("Exporter gauges not updated: {}", error.toString());
                    }
                    else
                    {
                        update(answers);
                    }
                });
        }
        catch (final RuntimeException e)
        {
            polling.set(false);
            LOG.debug("Exporter gauges not updated: {}", e.toString());
        }
    }

    /** Replaces every series with the answers' figures; partitions without an answer have none. */
    public synchronized void update(final Map<Integer, ExportersService.PartitionAnswer> answers)
    {
        if (retrying == null)
        {
            return;
        }
        final List<MultiGauge.Row<?>> retryingRows = new ArrayList<>();
        final List<MultiGauge.Row<?>> retriesRows = new ArrayList<>();
        final List<MultiGauge.Row<?>> deadLetterRows = new ArrayList<>();
        final List<MultiGauge.Row<?>> requestRows = new ArrayList<>();
        final List<MultiGauge.Row<?>> latencyRows = new ArrayList<>();
        final List<MultiGauge.Row<?>> sentRows = new ArrayList<>();
        final Map<Tags, long[]> seen = new HashMap<>();
        for (final ExportersService.PartitionAnswer answer : answers.values())
        {
            final PartitionExporters partition = answer.exporters();
            if (partition == null)
            {
                continue;
            }
            for (final ExporterStatus exporter : partition.exporters())
            {
                final Tags tags = Tags.of("exporter", exporter.exporterId(), "partition",
                    Integer.toString(partition.partitionId()));
                retryingRows.add(MultiGauge.Row.of(tags, exporter.retrying() ? 1 : 0));
                retriesRows.add(MultiGauge.Row.of(tags, exporter.failures()));
                deadLetterRows.add(MultiGauge.Row.of(tags, exporter.deadLetters()));
                requestRows.add(MultiGauge.Row.of(tags, exporter.sinkWrites()));
                sentRows.add(MultiGauge.Row.of(tags, Math.max(exporter.acknowledgedPosition(), exporter.sentPosition())));
                final long[] previous = previousWrites.get(tags);
                final long writes = exporter.sinkWrites();
                final long nanos = exporter.sinkWriteNanos();
                if (previous != null && writes > previous[0] && nanos >= previous[1])
                {
                    lastLatency.put(tags, (nanos - previous[1]) / 1e9 / (writes - previous[0]));
                }
                else if (previous == null && writes > 0)
                {
                    lastLatency.put(tags, nanos / 1e9 / writes);
                }
                seen.put(tags, new long[] {writes, nanos});
                final Double latency = lastLatency.get(tags);
                if (latency != null)
                {
                    latencyRows.add(MultiGauge.Row.of(tags, latency));
                }
            }
        }
        previousWrites.clear();
        previousWrites.putAll(seen);
        lastLatency.keySet().retainAll(seen.keySet());
        retrying.register(retryingRows, true);
        retries.register(retriesRows, true);
        deadLetters.register(deadLetterRows, true);
        bulkRequests.register(requestRows, true);
        bulkLatency.register(latencyRows, true);
        sentPositions.register(sentRows, true);
    }
}
