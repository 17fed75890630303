package io.sluice.gateway.broker;

import io.sluice.protocol.codecs.AdminRequestEncoder;
import io.sluice.protocol.codecs.AppendRequestEncoder;
import io.sluice.protocol.codecs.BooleanType;
import io.sluice.protocol.codecs.MessageHeaderEncoder;
import io.sluice.protocol.codecs.OperationScope;
import io.sluice.protocol.codecs.TopologyRequestEncoder;
import io.sluice.protocol.transport.MessageWriter;
import org.agrona.MutableDirectBuffer;

import java.nio.charset.StandardCharsets;
import java.util.List;

/**
 * The gateway's outbound requests as {@link MessageWriter}s. Each request keeps only its values; the
 * encoders are reused per thread because the transport may call {@code write} on any of its threads.
 */
public final class RequestWriters
{
    private static final ThreadLocal<Encoders> ENCODERS = ThreadLocal.withInitial(Encoders::new);

    private RequestWriters()
    {
    }

    /**
     * A request whose length is known before it is written; {@code encoding} runs on a transport thread, so it
     * takes its encoders per thread and captures only values.
     */
    public static MessageWriter of(final int encodedLength, final Encoding encoding)
    {
        return new MessageWriter()
        {
            public int encodedLength()
            {
                return encodedLength;
            }

            public void write(final MutableDirectBuffer buffer, final int offset)
            {
                encoding.write(buffer, offset);
            }
        };
    }

    /** Writes one request at {@code offset}: exactly the length given to {@link #of}. */
    @FunctionalInterface
    public interface Encoding
    {
        void write(MutableDirectBuffer buffer, int offset);
    }

    static MessageWriter admin(final int brokerId, final int partitionId, final AdminOperation operation)
    {
        final int[] partitions = operation.partitions();
        final int length = MessageHeaderEncoder.ENCODED_LENGTH + AdminRequestEncoder.BLOCK_LENGTH +
            AdminRequestEncoder.OperationPartitionsEncoder.sbeHeaderSize() +
            partitions.length * AdminRequestEncoder.OperationPartitionsEncoder.sbeBlockLength();
        return of(length, (buffer, offset) ->
        {
            final Encoders encoders = ENCODERS.get();
            final AdminRequestEncoder encoder = encoders.admin.wrapAndApplyHeader(buffer, offset, encoders.header)
                .brokerId(brokerId)
                .partitionId(partitionId)
                .kind(operation.kind())
                .version(operation.version())
                .leaderTargeted(operation.controlLeaderTargeted() ? BooleanType.TRUE : BooleanType.FALSE)
                .operationScope(operation.allPartitions() ? OperationScope.ALL : OperationScope.LISTED)
                .leaseMicros(operation.leaseMicros());
            final AdminRequestEncoder.OperationPartitionsEncoder listed = encoder.operationPartitionsCount(partitions.length);
            for (final int p : partitions)
            {
                listed.next().partitionId(p);
            }
        });
    }

    static MessageWriter topology(final int brokerId)
    {
        return of(MessageHeaderEncoder.ENCODED_LENGTH + TopologyRequestEncoder.BLOCK_LENGTH, (buffer, offset) ->
        {
            final Encoders encoders = ENCODERS.get();
            encoders.topology.wrapAndApplyHeader(buffer, offset, encoders.header).brokerId(brokerId);
        });
    }

    /** An append request; the records' keys are turned into UTF-8 once, here, so every retry reuses them. */
    static AppendWriter append(final int partitionId, final List<RecordToAppend> records, final AppendId id)
    {
        return new AppendWriter(partitionId, records, id);
    }

    static final class AppendWriter implements MessageWriter
    {
        private static final byte[] NO_KEY = new byte[0];

        private final int partitionId;
        private final List<RecordToAppend> records;
        private final AppendId id;
        private final byte[][] keys;
        private final int encodedLength;

        AppendWriter(final int partitionId, final List<RecordToAppend> records, final AppendId id)
        {
            final int min = id == null ? 1 : 0;
            if (records.size() < min || records.size() > AppendRequestEncoder.RecordsEncoder.countMaxValue())
            {
                throw new IllegalArgumentException("partition " + partitionId + ": a batch holds " + min + ".." +
                    AppendRequestEncoder.RecordsEncoder.countMaxValue() + " records, was " + records.size());
            }
            if (id != null && id.windowMs() <= 0)
            {
                throw new IllegalArgumentException("partition " + partitionId + ": an append id needs a positive window");
            }
            this.partitionId = partitionId;
            this.id = id;
            this.records = records;
            this.keys = new byte[records.size()][];
            long length = MessageHeaderEncoder.ENCODED_LENGTH + AppendRequestEncoder.BLOCK_LENGTH +
                AppendRequestEncoder.RecordsEncoder.sbeHeaderSize();
            for (int i = 0; i < keys.length; i++)
            {
                final RecordToAppend record = records.get(i);
                keys[i] = record.key() == null ? NO_KEY : record.key().getBytes(StandardCharsets.UTF_8);
                length += AppendRequestEncoder.RecordsEncoder.sbeBlockLength() +
                    AppendRequestEncoder.RecordsEncoder.keyHeaderLength() + keys[i].length +
                    AppendRequestEncoder.RecordsEncoder.payloadHeaderLength() + record.payload().length;
            }
            if (length > Integer.MAX_VALUE)
            {
                throw new IllegalArgumentException("partition " + partitionId + ": batch of " + length + " bytes is too large");
            }
            this.encodedLength = (int)length;
        }

        public int encodedLength()
        {
            return encodedLength;
        }

        public void write(final MutableDirectBuffer buffer, final int offset)
        {
            final Encoders encoders = ENCODERS.get();
            final AppendRequestEncoder.RecordsEncoder group = encoders.append
                .wrapAndApplyHeader(buffer, offset, encoders.header)
                .partitionId(partitionId)
                .idempotencyWindowMs(id == null ? 0 : id.windowMs())
                .idempotencyScope((short)(id == null ? 0 : id.scope()))
                .idHigh(id == null ? 0 : id.high())
                .idLow(id == null ? 0 : id.low())
                .bodyDigest(id == null ? 0 : id.bodyDigest())
                .recordsCount(keys.length);
            for (int i = 0; i < keys.length; i++)
            {
                final RecordToAppend record = records.get(i);
                group.next()
                    .timestamp(record.timestamp())
                    .putKey(keys[i], 0, keys[i].length)
                    .putPayload(record.payload(), 0, record.payload().length);
            }
        }
    }

    private static final class Encoders
    {
        final MessageHeaderEncoder header = new MessageHeaderEncoder();
        final AdminRequestEncoder admin = new AdminRequestEncoder();
        final AppendRequestEncoder append = new AppendRequestEncoder();
        final TopologyRequestEncoder topology = new TopologyRequestEncoder();
    }
}
