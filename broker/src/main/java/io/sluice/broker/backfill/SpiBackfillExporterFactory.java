package io.sluice.broker.backfill;

import io.sluice.exporter.spi.CommittedRecord;
import io.sluice.exporter.spi.Exporter;
import io.sluice.broker.exporter.ExporterConfig;
import io.sluice.exporter.spi.ExporterContext;
import io.sluice.exporter.spi.ExporterController;
import io.sluice.broker.exporter.ExporterRegistry;

import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Opens backfill exporters through the broker's exporter SPI: a fresh {@link Exporter} of the configured
 * kind per attempt, configured exactly like the partition's regular one (same id, properties and sink), whose
 * acknowledgements are the task's and never reach the regular exporter's position. Thread-safe.
 */
public final class SpiBackfillExporterFactory implements BackfillExporterFactory
{
    private final int brokerId;
    private final Path dataDir;
    private final Map<String, ExporterConfig> configs;
    private final ExporterRegistry registry;

    public SpiBackfillExporterFactory(
        final int brokerId, final Path dataDir, final Map<String, ExporterConfig> configs, final ExporterRegistry registry)
    {
        this.brokerId = brokerId;
        this.dataDir = dataDir;
        this.configs = Map.copyOf(configs);
        this.registry = registry;
    }

    @Override
    public BackfillExporter open(final String exporterId, final int partitionId, final BackfillTask task)
        throws Exception
    {
        final ExporterConfig config = configs.get(exporterId);
        if (config == null)
        {
            throw new IllegalArgumentException("exporter " + exporterId + " is not configured on broker " + brokerId +
                " (configured: " + configs.keySet() + ")");
        }
        final Exporter exporter = registry.create(config);
        final AtomicLong acknowledged = new AtomicLong(task.exportedUpTo());
        final ExporterController controller = position -> acknowledged.accumulateAndGet(position, Math::max);
        exporter.configure(new ExporterContext(exporterId, partitionId, brokerId, dataDir, config.exporterProperties()));
        exporter.open(controller);
        return new BackfillExporter()
        {
            public void onRecord(final CommittedRecord record) throws Exception
            {
                exporter.export(record);
            }

            public long flush() throws Exception
            {
                exporter.flush();
                return acknowledged.get();
            }

            @Override
            public long acknowledged()
            {
                return acknowledged.get();
            }

            public void close() throws Exception
            {
                exporter.close();
            }
        };
    }
}
