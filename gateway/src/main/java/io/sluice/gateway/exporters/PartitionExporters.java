package io.sluice.gateway.exporters;

import io.sluice.protocol.cluster.ExporterStatus;
import io.sluice.protocol.codecs.ExportingState;

import java.util.List;

/** A partition leader's answer to an exporters status request. */
public record PartitionExporters(int partitionId, ExportingState exportingState, long lastPosition,
                                 List<ExporterStatus> exporters)
{
}
