package io.sluice.gateway.exporters;

import io.sluice.gateway.topology.ClusterTopology;
import io.sluice.protocol.cluster.ExporterStatus;
import io.sluice.protocol.cluster.PartitionReplica;
import io.sluice.protocol.cluster.PartitionStatus;
import io.sluice.protocol.codecs.ExportingState;
import io.sluice.protocol.codecs.PartitionRole;
import io.sluice.protocol.concurrent.Futures;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.stereotype.Service;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;

/**
 * The exporters view: asks every partition's leader, all at once, how its exporters are doing (only the leader
 * runs them), and puts the answers together per exporter. A partition whose leader cannot be asked shows
 * {@code UNKNOWN} for each exporter, with the replicated position a reachable replica reported, if any. Generic
 * over exporter kinds: whatever the leaders' directors run is shown.
 */
@Service
public class ExportersService
{
    private final ClusterTopology topology;
    private final ExportersClient client;
    private final Duration requestTimeout;

    public ExportersService(
        final ClusterTopology topology,
        final ExportersClient client,
        @Value("${sluice.gateway.request-timeout:5s}") final Duration requestTimeout)
    {
        this.topology = topology;
        this.client = client;
        this.requestTimeout = requestTimeout;
    }

    /** One partition's answer, or why there is none. */
    public record PartitionAnswer(int partitionId, PartitionExporters exporters, String error)
    {
    }

    /** Every partition's answer, by partition id; never fails (a failure is an answer with an error). */
    public CompletableFuture<Map<Integer, PartitionAnswer>> answers()
    {
        final Map<Integer, CompletableFuture<PartitionAnswer>> pending = new TreeMap<>();
        for (int partitionId = 1; partitionId <= topology.distribution().partitionCount(); partitionId++)
        {
            final int id = partitionId;
            final OptionalInt leader = leaderOf(partitionId);
            if (leader.isEmpty())
            {
                pending.put(id, CompletableFuture.completedFuture(
                    new PartitionAnswer(id, null, "partition " + id + " has no reachable leader")));
                continue;
            }
            CompletableFuture<PartitionExporters> asked;
            try
            {
                asked = client.status(leader.getAsInt(), id, requestTimeout);
            }
            catch (final RuntimeException e)
            {
                asked = CompletableFuture.failedFuture(e);
            }
            pending.put(id, asked.handle((answer, failure) -> failure == null ?
                new PartitionAnswer(id, answer, null) : new PartitionAnswer(id, null, messageOf(failure))));
        }
        return CompletableFuture.allOf(pending.values().toArray(CompletableFuture[]::new)).thenApply(ignored ->
        {
            final Map<Integer, PartitionAnswer> answers = new TreeMap<>();
            pending.forEach((partitionId, future) -> answers.put(partitionId, future.join()));
            return answers;
        });
    }

    public CompletableFuture<ExportersView> view()
    {
        return answers().thenApply(this::viewOf);
    }

    ExportersView viewOf(final Map<Integer, PartitionAnswer> answers)
    {
        // Every exporter id any leader runs or any replica has a replicated position of, with its type if known.
        final Map<String, String> types = new TreeMap<>();
        for (final PartitionAnswer answer : answers.values())
        {
            if (answer.exporters() != null)
            {
                answer.exporters().exporters().forEach(e -> types.put(e.exporterId(), e.type()));
            }
            else
            {
                replicated(answer.partitionId()).ifPresent(s -> s.exporterPositions().keySet()
                    .forEach(id -> types.putIfAbsent(id, null)));
            }
        }
        final List<ExportersView.Exporter> exporters = new ArrayList<>();
        types.forEach((id, type) ->
        {
            final List<ExportersView.Partition> partitions = new ArrayList<>();
            for (final PartitionAnswer answer : answers.values())
            {
                partitions.add(partitionOf(id, answer));
            }
            exporters.add(new ExportersView.Exporter(id, type, partitions));
        });
        return new ExportersView(exporters);
    }

    private ExportersView.Partition partitionOf(final String exporterId, final PartitionAnswer answer)
    {
        final int partitionId = answer.partitionId();
        if (answer.exporters() != null)
        {
            final PartitionExporters leader = answer.exporters();
            for (final ExporterStatus exporter : leader.exporters())
            {
                if (exporter.exporterId().equals(exporterId))
                {
                    final String state;
                    if (leader.exportingState() == ExportingState.PAUSED)
                    {
                        state = ExportersView.PAUSED;
                    }
                    else if (exporter.retrying())
                    {
                        state = ExportersView.RETRYING;
                    }
                    else if (leader.exportingState() == ExportingState.SOFT_PAUSED)
                    {
                        state = ExportersView.SOFT_PAUSED;
                    }
                    else
                    {
                        state = ExportersView.EXPORTING;
                    }
                    final long acknowledged = exporter.acknowledgedPosition();
                    final long sent = Math.max(acknowledged, exporter.sentPosition());
                    return new ExportersView.Partition(partitionId, acknowledged, lag(leader.lastPosition(), acknowledged),
                        sent, lag(leader.lastPosition(), sent), state, exporter.lastError(),
                        exporter.hasUnavailable() ? List.of(new ExportersView.Range(exporter.unavailableFrom(),
                            exporter.unavailableTo())) : List.of());
                }
            }
        }
        // Not asked, or its leader's exporters are not running (yet): what the replicas replicated.
        final Optional<PartitionStatus> replicated = replicated(partitionId);
        final long position = replicated.map(s -> s.exporterPositions().getOrDefault(exporterId, -1L)).orElse(-1L);
        final long last = replicated.map(PartitionStatus::lastPosition).orElse(-1L);
        final String why = answer.error() != null ? answer.error() :
            "exporter " + exporterId + " is not running on partition " + partitionId + "'s leader";
        // Only the leader's running exporter knows what it sent.
        return new ExportersView.Partition(partitionId, position, position < 0 || last < 0 ? -1 : lag(last, position),
            -1, -1, ExportersView.UNKNOWN, why, List.of());
    }

    private static long lag(final long lastPosition, final long position)
    {
        return Math.max(0, lastPosition - position);
    }

    /** The leader as the topology knows it, when that broker is reachable and reports itself leading. */
    private OptionalInt leaderOf(final int partitionId)
    {
        final OptionalInt leader = topology.leaderOf(partitionId);
        if (leader.isPresent() && topology.isReachable(leader.getAsInt()) &&
            topology.status(new PartitionReplica(leader.getAsInt(), partitionId))
                .filter(s -> s.role() == PartitionRole.LEADER).isPresent())
        {
            return leader;
        }
        return OptionalInt.empty();
    }

    /** The reachable replica's report of the partition with the highest replicated positions. */
    private Optional<PartitionStatus> replicated(final int partitionId)
    {
        PartitionStatus best = null;
        for (final int brokerId : topology.distribution().replicasOf(partitionId))
        {
            final Optional<PartitionStatus> status =
                topology.status(new PartitionReplica(brokerId, partitionId));
            if (status.isPresent() && (best == null || status.get().lastPosition() > best.lastPosition()))
            {
                best = status.get();
            }
        }
        return Optional.ofNullable(best);
    }

    private static String messageOf(final Throwable failure)
    {
        final Throwable cause = Futures.unwrapAll(failure);
        return cause.getMessage() == null ? cause.toString() : cause.getMessage();
    }
}
