package io.sluice.broker.control;

import io.sluice.broker.log.codecs.BackupHoldActionCode;
import io.sluice.broker.log.codecs.BackupHoldEntryEncoder;
import io.sluice.broker.log.codecs.BooleanType;
import io.sluice.broker.log.codecs.ControlBarrierEntryEncoder;
import io.sluice.broker.log.codecs.ExportingChangeEntryEncoder;
import io.sluice.broker.log.codecs.ExportingLeaseExpiryEntryEncoder;
import io.sluice.broker.log.codecs.MessageHeaderEncoder;
import org.agrona.ExpandableArrayBuffer;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.thirdparty.com.google.protobuf.UnsafeByteOperations;

import java.util.Arrays;
import java.util.BitSet;

/**
 * The control group's log entries, encoded for a proposal with the broker log schema's generated encoders
 * ({@code ExportingChangeEntry}, {@code ExportingLeaseExpiryEntry}, {@code ControlBarrierEntry}, and {@code BackfillClaimEntry} through {@link ClaimCodes});
 * {@link ControlState#apply} decodes them. A few a pause or a reset, so each allocates.
 */
final class ControlEntries
{
    private ControlEntries()
    {
    }

    /** The change as {@code proposerBrokerId} proposes it at {@code nowMicros} (its clock: when the state begins). */
    static Message exportingChange(final ExportingChange change, final int proposerBrokerId, final long nowMicros)
    {
        final ExpandableArrayBuffer buffer = new ExpandableArrayBuffer(64);
        final ExportingChangeEntryEncoder encoder = new ExportingChangeEntryEncoder()
            .wrapAndApplyHeader(buffer, 0, new MessageHeaderEncoder())
            .version(change.version())
            .state(ExportingStamp.toCode(change.state()))
            .allPartitions(change.allPartitions() ? BooleanType.TRUE : BooleanType.FALSE)
            .proposerBrokerId(proposerBrokerId)
            .timestampMicros(nowMicros)
            .leaseMicros(change.leaseMicros());
        final BitSet listed = change.partitions();
        final ExportingChangeEntryEncoder.PartitionsEncoder partitions = encoder.partitionsCount(listed.cardinality());
        for (int p = listed.nextSetBit(0); p >= 0; p = listed.nextSetBit(p + 1))
        {
            partitions.next().partitionId(p);
        }
        return message(buffer, MessageHeaderEncoder.ENCODED_LENGTH + encoder.encodedLength());
    }

    /**
     * Ends the leased holds that ran out: partition id to the version of its hold, and the backup whose hold ran out
     * ({@code backupId}, 0 none).
     */
    static Message leaseExpiry(
        final java.util.Map<Integer, Long> expired, final long backupId, final int proposerBrokerId, final long nowMicros)
    {
        final ExpandableArrayBuffer buffer = new ExpandableArrayBuffer(40 + expired.size() * 12);
        final ExportingLeaseExpiryEntryEncoder encoder = new ExportingLeaseExpiryEntryEncoder()
            .wrapAndApplyHeader(buffer, 0, new MessageHeaderEncoder())
            .timestampMicros(nowMicros)
            .proposerBrokerId(proposerBrokerId)
            .backupId(backupId);
        final ExportingLeaseExpiryEntryEncoder.PartitionsEncoder partitions = encoder.partitionsCount(expired.size());
        expired.forEach((p, version) -> partitions.next().partitionId(p).version(version));
        return message(buffer, MessageHeaderEncoder.ENCODED_LENGTH + encoder.encodedLength());
    }

    /** A backup's hold: TAKE with its lease, or RELEASE (lease 0). */
    static Message backupHold(
        final long backupId, final BackupHoldActionCode action, final long leaseMicros, final int proposerBrokerId,
        final long nowMicros)
    {
        final ExpandableArrayBuffer buffer = new ExpandableArrayBuffer(64);
        final BackupHoldEntryEncoder encoder = new BackupHoldEntryEncoder()
            .wrapAndApplyHeader(buffer, 0, new MessageHeaderEncoder())
            .backupId(backupId)
            .action(action)
            .proposerBrokerId(proposerBrokerId)
            .timestampMicros(nowMicros)
            .leaseMicros(leaseMicros);
        return message(buffer, MessageHeaderEncoder.ENCODED_LENGTH + encoder.encodedLength());
    }

    static Message barrier(final int brokerId)
    {
        final ExpandableArrayBuffer buffer = new ExpandableArrayBuffer(16);
        final ControlBarrierEntryEncoder encoder = new ControlBarrierEntryEncoder()
            .wrapAndApplyHeader(buffer, 0, new MessageHeaderEncoder())
            .brokerId(brokerId);
        return message(buffer, MessageHeaderEncoder.ENCODED_LENGTH + encoder.encodedLength());
    }

    static Message backfillClaim(final BackfillClaimChange change)
    {
        return Message.valueOf(UnsafeByteOperations.unsafeWrap(ClaimCodes.encodeEntry(change)));
    }

    private static Message message(final ExpandableArrayBuffer buffer, final int length)
    {
        return Message.valueOf(UnsafeByteOperations.unsafeWrap(Arrays.copyOf(buffer.byteArray(), length)));
    }
}
