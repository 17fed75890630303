package io.sluice.gateway.exporting;

import io.sluice.gateway.json.JsonSyntaxError;
import io.sluice.protocol.cluster.PartitionReplica;
import tools.jackson.core.JacksonException;
import tools.jackson.core.StreamReadFeature;
import tools.jackson.databind.DeserializationFeature;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Reads the optional body of pause and resume: nothing (or only whitespace) means every pair;
 * otherwise exactly {@code {"targets": [{"brokerId": <int>, "partitionId": <int>}, ...]}}. Anything else is
 * refused: an unknown field (a typo such as {@code "target"}) must not turn into "every pair". Thread-safe.
 */
public final class ExportingTargetsReader
{
    private static final String TARGETS = "targets";
    private static final String BROKER_ID = "brokerId";
    private static final String PARTITION_ID = "partitionId";

    private final JsonMapper mapper = JsonMapper.builder()
        .enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION)
        .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
        .build();

    /**
     * @return empty for no body, else the listed targets (not yet checked against the distribution).
     * @throws InvalidTargetsException if the body is not of the documented shape.
     */
    public Optional<List<PartitionReplica>> read(final byte[] body)
    {
        if (body == null || new String(body, StandardCharsets.UTF_8).isBlank())
        {
            return Optional.empty();
        }
        final JsonNode root;
        try
        {
            root = mapper.readTree(body);
        }
        catch (final JacksonException e)
        {
            throw new InvalidTargetsException("malformed JSON body: " + JsonSyntaxError.describe(e));
        }
        if (root == null || !root.isObject())
        {
            throw new InvalidTargetsException("the body must be a JSON object {\"targets\": [...]}, was " + describe(root));
        }
        for (final String name : root.propertyNames())
        {
            if (!TARGETS.equals(name))
            {
                throw new InvalidTargetsException("unknown field '" + name + "' (the body has only \"targets\")");
            }
        }
        final JsonNode targets = root.get(TARGETS);
        if (targets == null || !targets.isArray())
        {
            throw new InvalidTargetsException("\"targets\" must be an array of {\"brokerId\": <int>, \"partitionId\": <int>}, was " +
                describe(targets));
        }
        final List<PartitionReplica> replicas = new ArrayList<>(targets.size());
        int index = 0;
        for (final JsonNode target : targets.values())
        {
            replicas.add(readTarget(target, index++));
        }
        return Optional.of(replicas);
    }

    private static PartitionReplica readTarget(final JsonNode target, final int index)
    {
        if (!target.isObject())
        {
            throw new InvalidTargetsException("targets[" + index + "] must be {\"brokerId\": <int>, \"partitionId\": <int>}, was " +
                describe(target));
        }
        for (final Map.Entry<String, JsonNode> field : target.properties())
        {
            if (!BROKER_ID.equals(field.getKey()) && !PARTITION_ID.equals(field.getKey()))
            {
                throw new InvalidTargetsException("targets[" + index + "] has unknown field '" + field.getKey() +
                    "' (a target has only \"brokerId\" and \"partitionId\")");
            }
        }
        return new PartitionReplica(readInt(target, BROKER_ID, index), readInt(target, PARTITION_ID, index));
    }

    private static int readInt(final JsonNode target, final String name, final int index)
    {
        final JsonNode value = target.get(name);
        if (value == null || value.isNull())
        {
            throw new InvalidTargetsException("targets[" + index + "]." + name + " is missing");
        }
        if (!value.isIntegralNumber() || !value.canConvertToInt())
        {
            throw new InvalidTargetsException("targets[" + index + "]." + name + " must be an integer, was " + describe(value));
        }
        return value.intValue();
    }

    private static String describe(final JsonNode node)
    {
        if (node == null || node.isMissingNode())
        {
            return "missing";
        }
        final String text = node.toString();
        return text.length() > 80 ? text.substring(0, 77) + "..." : text;
    }
}
