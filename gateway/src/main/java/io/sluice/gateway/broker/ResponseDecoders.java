package io.sluice.gateway.broker;

import io.sluice.protocol.cluster.PartitionReplica;
import io.sluice.protocol.cluster.PartitionStatus;
import io.sluice.protocol.cluster.ExportingHold;
import io.sluice.protocol.codecs.AdminResponseDecoder;
import io.sluice.protocol.codecs.AppendResponseDecoder;
import io.sluice.protocol.codecs.BooleanType;
import io.sluice.protocol.codecs.ExportingState;
import io.sluice.protocol.codecs.MessageHeaderDecoder;
import io.sluice.protocol.codecs.PartitionRole;
import io.sluice.protocol.codecs.TopologyResponseDecoder;
import org.agrona.DirectBuffer;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static io.sluice.gateway.broker.ResponseFrames.checkLimit;
import static io.sluice.gateway.broker.ResponseFrames.checkVarData;

/**
 * Decodes the brokers' answers to appends, admin and topology requests with reusable per-thread decoders, inside
 * {@link ResponseFrames#decode}: an ErrorResponse becomes a {@link BrokerErrorException}; anything that does not
 * decode cleanly becomes a {@link MalformedResponseException} — never a hang or a partial result.
 */
final class ResponseDecoders
{
    private static final ThreadLocal<ResponseDecoders> DECODERS = ThreadLocal.withInitial(ResponseDecoders::new);

    private final AdminResponseDecoder admin = new AdminResponseDecoder();
    private final AppendResponseDecoder append = new AppendResponseDecoder();
    private final TopologyResponseDecoder topology = new TopologyResponseDecoder();

    static ResponseDecoders get()
    {
        return DECODERS.get();
    }

    AdminResult decodeAdmin(final DirectBuffer buffer, final PartitionReplica target)
    {
        final String what = target.toString();
        return ResponseFrames.decode(buffer, AdminResponseDecoder.TEMPLATE_ID, what, "admin response", (header, length) ->
        {
            admin.wrap(buffer, MessageHeaderDecoder.ENCODED_LENGTH, header.blockLength(), header.version());
            checkLimit(admin.limit(), length, what);
            if (admin.brokerId() != target.brokerId() || admin.partitionId() != target.partitionId())
            {
                throw new MalformedResponseException(what + ": answer is for partition " + admin.partitionId() +
                    " on broker " + admin.brokerId());
            }
            final ExportingState state = admin.exportingState();
            if (state == ExportingState.SBE_UNKNOWN || state == ExportingState.NULL_VAL)
            {
                throw new MalformedResponseException(what + ": unknown exporting state " + admin.exportingStateRaw());
            }
            return new AdminResult(target, state, admin.version(), admin.exportedPosition(), admin.lastPosition(),
                ExportingHold.of(admin.sinceMicros(), admin.expiresAtMicros(), 0));
        });
    }

    AppendResult decodeAppend(final DirectBuffer buffer, final int brokerId, final int partitionId)
    {
        final String what = "partition " + partitionId + " on broker " + brokerId;
        return ResponseFrames.decode(buffer, AppendResponseDecoder.TEMPLATE_ID, what, "append response", (header, length) ->
        {
            append.wrap(buffer, MessageHeaderDecoder.ENCODED_LENGTH, header.blockLength(), header.version());
            checkLimit(append.limit(), length, what);
            if (append.partitionId() != partitionId || append.firstPosition() < 0 || append.count() < 0)
            {
                throw new MalformedResponseException(what + ": bad append answer (partition " + append.partitionId() +
                    ", firstPosition " + append.firstPosition() + ", count " + append.count() + ")");
            }
            return new AppendResult(partitionId, append.firstPosition(), append.count());
        });
    }

    BrokerTopology decodeTopology(final DirectBuffer buffer, final int brokerId)
    {
        final String what = "broker " + brokerId;
        return ResponseFrames.decode(buffer, TopologyResponseDecoder.TEMPLATE_ID, what, "topology response", (header, length) ->
        {
            topology.wrap(buffer, MessageHeaderDecoder.ENCODED_LENGTH, header.blockLength(), header.version());
            if (topology.brokerId() != brokerId)
            {
                throw new MalformedResponseException(what + ": answered as broker " + topology.brokerId());
            }
            final List<PartitionStatus> partitions = new ArrayList<>();
            for (final TopologyResponseDecoder.PartitionsDecoder p : topology.partitions())
            {
                final int partitionId = p.partitionId();
                final PartitionRole role = p.role();
                final long term = p.term();
                final int leaderId = p.leaderId();
                final ExportingState exportingState = p.exportingState();
                final long stateVersion = p.exportingStateVersion();
                final long lastPosition = p.lastPosition();
                final long exportedPosition = p.exportedPosition();
                final long firstPosition = Math.max(0, p.firstPosition()); // null (version 4): 0, unknown
                final ExportingHold hold = ExportingHold.of(p.exportingSinceMicros(), p.leaseExpiresAtMicros(),
                    p.leaseExpiredAtMicros());
                // null (version 4): not known; -1: no exporter runs there (a follower)
                final long sentPosition = Math.max(-1, p.sentPosition());
                final Map<String, Long> exporterPositions = new HashMap<>();
                for (final TopologyResponseDecoder.PartitionsDecoder.ExportersDecoder e : p.exporters())
                {
                    final long position = e.position();
                    checkVarData(buffer, topology.limit(), length, what);
                    exporterPositions.put(e.exporterId(), position);
                    checkLimit(topology.limit(), length, what);
                }
                checkLimit(topology.limit(), length, what);
                if (role == PartitionRole.SBE_UNKNOWN || role == PartitionRole.NULL_VAL)
                {
                    throw new MalformedResponseException(what + ": partition " + partitionId + " has unknown role " + p.roleRaw());
                }
                partitions.add(new PartitionStatus(partitionId, role, term, leaderId,
                    exportingState == ExportingState.SBE_UNKNOWN || exportingState == ExportingState.NULL_VAL ?
                        null : exportingState,
                    stateVersion, lastPosition, exportedPosition, Map.copyOf(exporterPositions), firstPosition,
                    hold, sentPosition));
            }
            checkLimit(topology.limit(), length, what);
            // Absent before protocol version 3: a broker that does not say has no control group to wait for.
            final int controlLeaderId = topology.controlLeaderId();
            final boolean controlCaughtUp = topology.controlCaughtUp() != BooleanType.FALSE;
            // Absent before protocol version 5: the disk reads as unknown.
            final double diskUsedRatio = topology.diskUsedRatio();
            final long diskFreeBytes = topology.diskFreeBytes();
            final BrokerDisk disk = diskFreeBytes == TopologyResponseDecoder.diskFreeBytesNullValue() ?
                BrokerDisk.UNKNOWN : new BrokerDisk(diskUsedRatio, diskFreeBytes, topology.appendsRefusedDisk());
            return new BrokerTopology(brokerId, List.copyOf(partitions),
                controlLeaderId == TopologyResponseDecoder.controlLeaderIdNullValue() ? -1 : controlLeaderId, controlCaughtUp,
                disk, Math.max(0, topology.leaseExpiries()));
        });
    }
}
