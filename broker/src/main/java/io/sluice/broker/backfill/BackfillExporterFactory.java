package io.sluice.broker.backfill;

/** Opens a fresh exporter instance for one attempt of one task; the broker maps exporter ids to its exporter kinds. */
@FunctionalInterface
public interface BackfillExporterFactory
{
    /** @throws Exception when the exporter id is unknown or its sink cannot be opened: the attempt fails. */
    BackfillExporter open(String exporterId, int partitionId, BackfillTask task) throws Exception;
}
