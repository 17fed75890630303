package io.sluice.cli;

import picocli.CommandLine.Command;
import tools.jackson.databind.JsonNode;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * {@code admin partitions}: the cluster view of {@code GET /actuator/partitions} as two tables, brokers
 * and replicas (one row per partition replica). An answer of another shape is shown flattened: one row
 * per innermost object, carrying its parents' plain fields.
 */
@Command(
    name = "partitions",
    aliases = "topology",
    mixinStandardHelpOptions = true,
    description = "Show every broker and partition: role, term, health, reachable or not.")
final class PartitionsCommand extends GatewayCommand
{
    PartitionsCommand(final CliConsole console)
    {
        super(console);
    }

    @Override
    public Integer call() throws GatewayUnreachableException
    {
        return printAnswer("partitions", gateway.connect(console).get("/partitions"), this::printView);
    }

    private void printView(final JsonNode view)
    {
        if (view.path("brokers").isArray() || view.path("partitions").isArray())
        {
            printClusterView(view);
        }
        else
        {
            printFlattened(view);
        }
    }

    private void printClusterView(final JsonNode view)
    {
        final long controlLeader = view.path("controlLeaderId").asLong(-1);
        console.out().println("cluster: " + view.path("clusterSize").asString("?") + " brokers, "
            + view.path("partitionCount").asString("?") + " partitions, replication factor "
            + view.path("replicationFactor").asString("?")
            + (view.has("controlLeaderId") ? ", control group " +
                (controlLeader < 0 ? "without a leader" : "led by broker " + controlLeader) : ""));
        final Table brokers = new Table("BROKER", "ADDRESS", "REACHABLE", "LEADS", "PREFERRED FOR", "REASON");
        for (final JsonNode broker : view.path("brokers"))
        {
            brokers.row(broker.path("brokerId").asString(), broker.path("address").asString(""),
                broker.path("reachable").asBoolean(false) ? "yes" : "no", ids(broker.path("leaderOf")),
                ids(broker.path("preferredLeaderOf")), text(broker.path("reason")));
        }
        brokers.print(console.out());
        console.out().println();

        // POSITION: the acknowledged position (JSON exportedPosition), named as in `admin exporting status`.
        final Table partitions = new Table(
            "PARTITION", "LEADER", "HEALTH", "BROKER", "ROLE", "TERM", "REACHABLE", "LAST", "POSITION");
        for (final JsonNode partition : view.path("partitions"))
        {
            final String partitionId = partition.path("partitionId").asString();
            final long leader = partition.path("leaderId").asLong(-1);
            final String health = partition.path("health").asString("-");
            for (final JsonNode replica : partition.path("replicas"))
            {
                partitions.row(partitionId, leader < 0 ? "none" : leader, health,
                    replica.path("brokerId").asString(), replica.path("role").asString("UNKNOWN"),
                    position(replica.path("term")), replica.path("reachable").asBoolean(false) ? "yes" : "no",
                    position(replica.path("lastPosition")), position(replica.path("exportedPosition")));
            }
        }
        partitions.print(console.out());
    }

    private void printFlattened(final JsonNode view)
    {
        final List<Map<String, String>> rows = new ArrayList<>();
        flatten(view, new LinkedHashMap<>(), rows);
        final Set<String> columns = new LinkedHashSet<>();
        rows.forEach(row -> columns.addAll(row.keySet()));
        final Table table = new Table(columns.stream().map(PartitionsCommand::heading).toArray(String[]::new));
        for (final Map<String, String> row : rows)
        {
            table.row(columns.stream().map(column -> row.getOrDefault(column, "")).toArray());
        }
        table.print(console.out());
    }

    /** A list of partition ids as "1,4 (2)"; "-" for none or when the gateway did not send it. */
    private static String ids(final JsonNode list)
    {
        if (!list.isArray() || list.isEmpty())
        {
            return "-";
        }
        final List<String> ids = new ArrayList<>();
        list.forEach(id -> ids.add(id.asString()));
        return String.join(",", ids) + " (" + ids.size() + ")";
    }

    private static String text(final JsonNode value)
    {
        return value.isMissingNode() || value.isNull() ? "" : value.asString();
    }

    private static String position(final JsonNode value)
    {
        return value.isNumber() && value.asLong() >= 0 ? value.asString() : "-";
    }

    /** Adds one row per innermost object; each carries the plain fields of the objects around it. */
    static void flatten(final JsonNode node, final Map<String, String> inherited, final List<Map<String, String>> rows)
    {
        if (node.isArray())
        {
            for (final JsonNode element : node)
            {
                flatten(element, inherited, rows);
            }
            return;
        }
        if (!node.isObject())
        {
            return;
        }
        final Map<String, String> fields = new LinkedHashMap<>(inherited);
        final List<JsonNode> children = new ArrayList<>();
        for (final Map.Entry<String, JsonNode> property : node.properties())
        {
            final JsonNode value = property.getValue();
            if (value.isContainer())
            {
                if (value.isArray() && hasObjects(value))
                {
                    children.add(value);
                }
                else if (value.isObject())
                {
                    children.add(value);
                }
                else
                {
                    fields.put(property.getKey(), value.toString());
                }
            }
            else
            {
                fields.put(property.getKey(), value.isNull() ? "-" : value.asString());
            }
        }
        final int before = rows.size();
        for (final JsonNode child : children)
        {
            flatten(child, fields, rows);
        }
        if (rows.size() == before && !fields.isEmpty())
        {
            rows.add(fields);
        }
    }

    private static boolean hasObjects(final JsonNode array)
    {
        for (final JsonNode element : array)
        {
            if (element.isObject())
            {
                return true;
            }
        }
        return false;
    }

    private static String heading(final String field)
    {
        return field.replaceAll("([a-z])([A-Z])", "$1 $2").toUpperCase();
    }
}
