package io.sluice.exporter.spi;

import java.nio.file.Path;
import java.util.Map;

/**
 * What an exporter instance knows about itself: its id and properties, the partition it exports and the
 * cluster's data directory (the {@code sluice.data-dir} root).
 */
public record ExporterContext(String id, int partitionId, int brokerId, Path dataDir, Map<String, String> properties)
{
}
