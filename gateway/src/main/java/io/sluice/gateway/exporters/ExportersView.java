package io.sluice.gateway.exporters;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyOrder;

import java.util.List;

/**
 * {@code GET /actuator/exporters} (CONTRACT §3): every exporter with, per partition, its acknowledged position
 * ({@code position}: the replicated one, which compaction and a new leader go by; the same number as the exporting
 * status's {@code exportedPosition} and the metric {@code sluice_exporter_position}), lag (the partition's last
 * position minus it), the last position sent to the sink ({@code sentPosition}, ahead of {@code position} while a
 * soft pause holds acknowledgements back or a bulk is in flight) with its own lag ({@code sentLag}), state and last
 * error, and {@code unavailable}: the positions it can never export there because they were compacted before it got
 * there (empty when none; issue 29). Positions are -1 when unknown.
 */
@JsonPropertyOrder({ "exporters" })
public record ExportersView(List<Exporter> exporters)
{
    public static final String EXPORTING = "EXPORTING";
    public static final String RETRYING = "RETRYING";
    public static final String PAUSED = "PAUSED";
    public static final String SOFT_PAUSED = "SOFT_PAUSED";
    public static final String UNKNOWN = "UNKNOWN";

    public ExportersView
    {
        exporters = List.copyOf(exporters);
    }

    @JsonPropertyOrder({ "id", "type", "partitions" })
    public record Exporter(String id, @JsonInclude(JsonInclude.Include.ALWAYS) String type, List<Partition> partitions)
    {
        public Exporter
        {
            partitions = List.copyOf(partitions);
        }
    }

    @JsonPropertyOrder({ "partitionId", "position", "lag", "sentPosition", "sentLag", "state", "lastError",
        "unavailable" })
    public record Partition(int partitionId, long position, long lag, long sentPosition, long sentLag, String state,
                            @JsonInclude(JsonInclude.Include.ALWAYS) String lastError, List<Range> unavailable)
    {
        public Partition
        {
            unavailable = List.copyOf(unavailable);
        }

        /** A partition whose sink has what was acknowledged, no more. */
        public Partition(final int partitionId, final long position, final long lag, final String state,
            final String lastError, final List<Range> unavailable)
        {
            this(partitionId, position, lag, position, lag, state, lastError, unavailable);
        }

        /** A partition whose sink has what was acknowledged, no more, where the exporter missed nothing. */
        public Partition(final int partitionId, final long position, final long lag, final String state,
            final String lastError)
        {
            this(partitionId, position, lag, state, lastError, List.of());
        }
    }

    /** Positions {@code fromPosition..toPosition}, both included. */
    @JsonPropertyOrder({ "fromPosition", "toPosition" })
    public record Range(long fromPosition, long toPosition)
    {
    }
}
