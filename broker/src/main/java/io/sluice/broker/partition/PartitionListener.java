package io.sluice.broker.partition;

import org.apache.ratis.protocol.RaftPeerId;

/**
 * Events of a partition's state machine, called on Ratis threads (the apply thread, or one handling a Raft RPC):
 * they must not block. {@link Partition} hops whatever may wait (starting or stopping the exporters) onto the
 * exporter scheduler and only flags or wakes from here.
 */
public interface PartitionListener extends PartitionState.Listener
{
    /** The local replica became leader and committed the first entry of its term. */
    void onLeaderReady(int partitionId);

    /** The leader changed; {@code newLeaderId} null when unknown. */
    void onLeaderChanged(int partitionId, RaftPeerId newLeaderId);
}
