package io.sluice.broker.partition;

import io.sluice.broker.exporting.UnavailableRange;
import io.sluice.broker.append.AppendEntries;
import io.sluice.broker.backfill.BackfillEntry;
import io.sluice.broker.backfill.BackfillMessages;
import io.sluice.broker.log.codecs.ExporterPositionsEntryEncoder;
import io.sluice.broker.log.codecs.MessageHeaderEncoder;
import org.agrona.ExpandableArrayBuffer;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.thirdparty.com.google.protobuf.UnsafeByteOperations;

import java.util.Arrays;
import java.util.Map;

/**
 * The partition's log entries that carry no records, encoded for a proposal: exporter positions and backfill changes (record batches are {@link AppendEntries}'). Off the hot path, so each allocates.
 */
final class StateEntries
{
    private StateEntries()
    {
    }

    static Message backfill(final BackfillEntry entry)
    {
        return Message.valueOf(UnsafeByteOperations.unsafeWrap(BackfillMessages.encode(entry)));
    }

    static Message exporterPositions(final Map<String, Long> positions)
    {
        return exporterPositions(positions, Map.of());
    }

    /** Positions, each with the range the exporter moved past to get there where {@code unavailable} has one. */
    static Message exporterPositions(final Map<String, Long> positions, final Map<String, UnavailableRange> unavailable)
    {
        final ExpandableArrayBuffer buffer = new ExpandableArrayBuffer(128);
        final ExporterPositionsEntryEncoder encoder = new ExporterPositionsEntryEncoder()
            .wrapAndApplyHeader(buffer, 0, new MessageHeaderEncoder());
        final ExporterPositionsEntryEncoder.ExportersEncoder exporters = encoder.exportersCount(positions.size());
        positions.forEach((id, position) ->
        {
            final UnavailableRange range = unavailable.get(id);
            exporters.next().position(position)
                .unavailableFrom(range == null ? 0 : range.fromPosition())
                .unavailableTo(range == null ? 0 : range.toPosition())
                .exporterId(id);
        });
        final int length = MessageHeaderEncoder.ENCODED_LENGTH + encoder.encodedLength();
        return Message.valueOf(UnsafeByteOperations.unsafeWrap(Arrays.copyOf(buffer.byteArray(), length)));
    }
}
