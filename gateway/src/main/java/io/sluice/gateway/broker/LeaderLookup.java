package io.sluice.gateway.broker;

import java.util.OptionalInt;

/** Where the broker client asks first for a partition's leader; usually the cluster topology. */
@FunctionalInterface
public interface LeaderLookup
{
    LeaderLookup NONE = partitionId -> OptionalInt.empty();

    OptionalInt leaderOf(int partitionId);
}
