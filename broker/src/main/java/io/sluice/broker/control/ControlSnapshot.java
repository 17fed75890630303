package io.sluice.broker.control;

import io.sluice.broker.log.codecs.ControlSnapshotDecoder;
import io.sluice.broker.log.codecs.ControlSnapshotEncoder;
import io.sluice.broker.log.codecs.MessageHeaderDecoder;
import io.sluice.broker.log.codecs.MessageHeaderEncoder;
import io.sluice.broker.partition.SnapshotFile;
import org.agrona.DirectBuffer;
import org.agrona.ExpandableArrayBuffer;
import org.agrona.concurrent.UnsafeBuffer;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Collections;
import java.util.Map;
import java.util.TreeMap;

/**
 * The control group's state at a snapshot: one {@code ControlSnapshot} message of the broker log schema, the stamp
 * of every partition an operation reached. Immutable; partitions in id order, so equal states encode to equal bytes.
 */
public record ControlSnapshot(Map<Integer, ExportingStamp> partitions)
{
    public ControlSnapshot
    {
        partitions = Collections.unmodifiableMap(new TreeMap<>(partitions));
    }

    public byte[] encode()
    {
        final ExpandableArrayBuffer buffer = new ExpandableArrayBuffer(64 + partitions.size() * 16);
        final ControlSnapshotEncoder encoder = new ControlSnapshotEncoder()
            .wrapAndApplyHeader(buffer, 0, new MessageHeaderEncoder());
        final ControlSnapshotEncoder.PartitionsEncoder group = encoder.partitionsCount(partitions.size());
        partitions.forEach((p, stamp) ->
            group.next().partitionId(p).state(ExportingStamp.toCode(stamp.state())).version(stamp.version()));
        return Arrays.copyOf(buffer.byteArray(), MessageHeaderEncoder.ENCODED_LENGTH + encoder.encodedLength());
    }

    /**
     * @throws IOException when the bytes are not a control snapshot this version reads; {@code source} names them.
     */
    public static ControlSnapshot decode(final DirectBuffer buffer, final int offset, final int length, final String source)
        throws IOException
    {
        if (length < MessageHeaderDecoder.ENCODED_LENGTH)
        {
            throw new IOException(source + " is not a control snapshot: " + length + " bytes");
        }
        final MessageHeaderDecoder header = new MessageHeaderDecoder().wrap(buffer, offset);
        if (header.schemaId() != ControlSnapshotDecoder.SCHEMA_ID || header.templateId() != ControlSnapshotDecoder.TEMPLATE_ID)
        {
            throw new IOException(source + " is not a control snapshot");
        }
        final ControlSnapshotDecoder decoder = new ControlSnapshotDecoder()
            .wrap(buffer, offset + header.encodedLength(), header.blockLength(), header.version());
        final int groupHeaderEnd = offset + header.encodedLength() + header.blockLength() + 4;
        if (groupHeaderEnd > offset + length)
        {
            throw new IOException(source + " is cut short: " + length + " bytes");
        }
        final Map<Integer, ExportingStamp> partitions = new TreeMap<>();
        final ControlSnapshotDecoder.PartitionsDecoder group = decoder.partitions();
        if (groupHeaderEnd + (long)group.count() * group.actingBlockLength() > offset + length)
        {
            throw new IOException(source + " is cut short: " + group.count() + " partitions in " + length + " bytes");
        }
        for (final ControlSnapshotDecoder.PartitionsDecoder p : group)
        {
            try
            {
                partitions.put(p.partitionId(), new ExportingStamp(ExportingStamp.toExportingState(p.state()), p.version()));
            }
            catch (final IllegalArgumentException e)
            {
                throw new IOException(source + ": partition " + p.partitionId() + ": " + e.getMessage(), e);
            }
        }
        return new ControlSnapshot(partitions);
    }

    /** Writes the file whole or not at all ({@link SnapshotFile}). */
    public void writeTo(final Path file) throws IOException
    {
        SnapshotFile.write(file, encode());
    }

    public static ControlSnapshot readFrom(final Path file) throws IOException
    {
        final byte[] bytes = Files.readAllBytes(file);
        return decode(new UnsafeBuffer(bytes), 0, bytes.length, file.toString());
    }
}
