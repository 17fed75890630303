package io.sluice.qa.chaos;

import io.sluice.protocol.cluster.PartitionReplica;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * What a run did and saw: every operation, every exported line, and the cluster's placement (partition id to its
 * replicas' broker ids), which the checker needs because the exporting state is a partition's while operations and
 * status reads name pairs.
 */
public record History(List<Operation> operations, List<Export> exports, Map<Integer, List<Integer>> replicas)
{
    public History
    {
        operations = operations.stream().sorted(Comparator.comparingLong(Operation::invokedAt)
            .thenComparingInt(Operation::id)).toList();
        exports = List.copyOf(exports);
        replicas = Map.copyOf(replicas);
    }

    /** Every pair of the placement. */
    public Set<PartitionReplica> pairs()
    {
        final Set<PartitionReplica> pairs = new TreeSet<>();
        replicas.forEach((partitionId, brokers) -> brokers.forEach(b -> pairs.add(new PartitionReplica(b, partitionId))));
        return pairs;
    }

    /** The pairs of one partition. */
    public Set<PartitionReplica> pairsOf(final int partitionId)
    {
        final Set<PartitionReplica> pairs = new TreeSet<>();
        replicas.getOrDefault(partitionId, List.of()).forEach(b -> pairs.add(new PartitionReplica(b, partitionId)));
        return pairs;
    }

    /** The partition's lines in file order. */
    public List<Export> exportsOf(final int partitionId)
    {
        final List<Export> lines = new ArrayList<>();
        for (final Export export : exports)
        {
            if (export.partitionId() == partitionId)
            {
                lines.add(export);
            }
        }
        lines.sort(Comparator.comparingInt(Export::line));
        return lines;
    }

    public <T extends Operation> List<T> operations(final Class<T> kind)
    {
        return operations.stream().filter(kind::isInstance).map(kind::cast).toList();
    }
}
