package io.sluice.cli;

import io.sluice.protocol.cluster.PartitionReplica;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.ObjectNode;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The exporting-control side of a gateway, per CONTRACT §3, for {@link FakeGateway}: a fixed set of
 * pairs, each answering a scripted sequence of outcomes (SUCCEEDED once the script runs out). It reads
 * the optional {@code {"targets": [...]}} body, answers 400 for a pair outside the cluster, and sums
 * the status up as the contract says (200, 503 when any failed, 504 when none failed and any timed out).
 */
public final class FakeExportingCluster
{
    private static final JsonMapper MAPPER = JsonMapper.builder().build();

    private final Map<PartitionReplica, Deque<String[]>> scripts = new TreeMap<>();
    private final Map<PartitionReplica, String> states = new TreeMap<>();

    public FakeExportingCluster(final int brokers, final int partitions, final int replicationFactor)
    {
        for (int p = 1; p <= partitions; p++)
        {
            for (int i = 0; i < replicationFactor; i++)
            {
                final PartitionReplica pair = new PartitionReplica((p - 1 + i) % brokers, p);
                scripts.put(pair, new ArrayDeque<>());
                states.put(pair, "EXPORTING");
            }
        }
    }

    /** The pair answers these outcomes to its next calls, one each; then SUCCEEDED. */
    public FakeExportingCluster script(final PartitionReplica pair, final String... outcomes)
    {
        for (final String outcome : outcomes)
        {
            scripts.get(pair).add(new String[] {outcome, "broker " + pair.brokerId() + " unreachable"});
        }
        return this;
    }

    public List<PartitionReplica> pairs()
    {
        return new ArrayList<>(scripts.keySet());
    }

    public String state(final PartitionReplica pair)
    {
        return states.get(pair);
    }

    public FakeGateway installOn(final FakeGateway gateway)
    {
        gateway.on("POST", "/actuator/exporting/pause", request ->
            operate(request, "true".equals(query(request, "soft")) ? "SOFT_PAUSE" : "PAUSE"));
        gateway.on("POST", "/actuator/exporting/resume", request -> operate(request, "RESUME"));
        gateway.on("GET", "/actuator/exporting", request -> status());
        return gateway;
    }

    private synchronized FakeGateway.Reply operate(final FakeGateway.Request request, final String operation)
    {
        final List<PartitionReplica> targets = new ArrayList<>();
        if (request.body().isBlank())
        {
            targets.addAll(scripts.keySet());
        }
        else
        {
            final JsonNode body = MAPPER.readTree(request.body());
            for (final JsonNode target : body.path("targets"))
            {
                final PartitionReplica pair = new PartitionReplica(target.path("brokerId").asInt(), target.path("partitionId").asInt());
                if (!scripts.containsKey(pair))
                {
                    return FakeGateway.Reply.error(400, "Bad Request",
                        "broker " + pair.brokerId() + " does not host partition " + pair.partitionId());
                }
                targets.add(pair);
            }
        }

        final ObjectNode answer = MAPPER.createObjectNode();
        answer.put("operation", operation);
        final ArrayNode results = MAPPER.createArrayNode();
        boolean failed = false;
        boolean timedOut = false;
        for (final PartitionReplica pair : targets)
        {
            final String[] scripted = scripts.get(pair).poll();
            final ObjectNode result = results.addObject();
            result.put("brokerId", pair.brokerId()).put("partitionId", pair.partitionId());
            if (scripted == null || "SUCCEEDED".equals(scripted[0]))
            {
                result.put("outcome", "SUCCEEDED");
                states.put(pair, "RESUME".equals(operation) ? "EXPORTING" : "PAUSE".equals(operation) ? "PAUSED" : "SOFT_PAUSED");
            }
            else
            {
                result.put("outcome", scripted[0]).put("error", scripted[1]);
                failed |= "FAILED".equals(scripted[0]);
                timedOut |= "TIMED_OUT".equals(scripted[0]);
            }
        }
        answer.put("result", failed ? "FAILED" : timedOut ? "TIMED_OUT" : "SUCCEEDED");
        answer.set("targets", results);
        return FakeGateway.Reply.json(failed ? 503 : timedOut ? 504 : 200, answer.toString());
    }

    private synchronized FakeGateway.Reply status()
    {
        final ObjectNode answer = MAPPER.createObjectNode();
        final ArrayNode targets = answer.putArray("targets");
        String common = null;
        for (final Map.Entry<PartitionReplica, String> entry : states.entrySet())
        {
            final boolean leader = entry.getKey().brokerId() == (entry.getKey().partitionId() - 1) % 3;
            final ObjectNode target = targets.addObject()
                .put("brokerId", entry.getKey().brokerId())
                .put("partitionId", entry.getKey().partitionId())
                .put("role", leader ? "LEADER" : "FOLLOWER")
                .put("state", entry.getValue())
                .put("exportedPosition", 100);
            // Only the leader exports; a soft pause holds the acknowledged position back, not the sending.
            if (leader)
            {
                target.put("sentPosition", "SOFT_PAUSED".equals(entry.getValue()) ? 130 : 100);
            }
            else
            {
                target.putNull("sentPosition");
            }
            target.put("lastPosition", 140);
            common = common == null || common.equals(entry.getValue()) ? entry.getValue() : "MIXED";
        }
        answer.put("state", common);
        return FakeGateway.Reply.json(200, answer.toString());
    }

    private static String query(final FakeGateway.Request request, final String name)
    {
        if (request.query() == null)
        {
            return null;
        }
        for (final String part : request.query().split("&"))
        {
            final int eq = part.indexOf('=');
            if (eq > 0 && part.substring(0, eq).equals(name))
            {
                return part.substring(eq + 1);
            }
        }
        return null;
    }
}
