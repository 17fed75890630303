package io.sluice.dist;

import io.sluice.protocol.cluster.InvalidClusterConfigException;
import org.springframework.boot.context.event.ApplicationEnvironmentPreparedEvent;
import org.springframework.context.ApplicationListener;
import org.springframework.core.Ordered;
import org.springframework.core.env.ConfigurableEnvironment;
import org.springframework.core.env.EnumerablePropertySource;
import org.springframework.core.env.PropertySource;
import org.springframework.core.env.StandardEnvironment;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * Every {@code sluice.*} setting a process of the distribution reads, and the check that stops a standalone, broker or
 * gateway start on any other one with one line naming it ({@code sluice: sluice.broker.disk.free-space-reserv: unknown
 * setting (did you mean sluice.broker.disk.free-space-reserve?)}): a typo never falls back to a default in silence.
 * <p>
 * One list for all modes, because one configuration (a Kubernetes ConfigMap) is shared by brokers and gateways.
 * Names are compared in canonical form (lower-case letters and digits of each name, as Spring's relaxed binding
 * matches them), so {@code --sluice.broker.node-id}, {@code --sluice.broker.nodeId} and the environment variables
 * {@code SLUICE_BROKER_NODEID} and {@code SLUICE_BROKER_NODE_ID} are all {@code sluice.broker.node-id}. Everything
 * under {@code sluice.exporters.<id>.} is left to the exporter checks, which know each kind's settings.
 * <p>
 * Checked: command-line options, environment variables and configuration files, every property source but JVM system
 * properties ({@code -D}), where tools keep their own {@code sluice.qa.*} and {@code sluice.bench.*} switches.
 */
public final class KnownSettings implements ApplicationListener<ApplicationEnvironmentPreparedEvent>, Ordered
{
    /**
     * The settings (CONTRACT §1, §8, docs/operations.md). A new {@code @ConfigurationProperties} field or
     * {@code @Value("${sluice...}")} needs its name here: {@code KnownSettingsTest} fails until it is.
     */
    static final List<String> SETTINGS = List.of(
        "sluice.data-dir",
        "sluice.cluster.brokers",
        "sluice.cluster.partitions",
        "sluice.cluster.replication-factor",
        "sluice.cluster.auto-rebalance",
        "sluice.cluster.control-voters",
        "sluice.cluster.tls.enabled",
        "sluice.cluster.tls.certificate",
        "sluice.cluster.tls.private-key",
        "sluice.cluster.tls.trusted-certificates",
        "sluice.broker.node-id",
        "sluice.broker.snapshot-threshold",
        "sluice.broker.segment-size",
        "sluice.broker.election-timeout",
        "sluice.broker.disk.high-watermark",
        "sluice.broker.disk.free-space-reserve",
        "sluice.gateway.request-timeout",
        "sluice.gateway.max-payload-bytes",
        "sluice.gateway.max-request-bytes",
        "sluice.gateway.topology-poll-interval",
        "sluice.gateway.topology-poll-timeout",
        "sluice.gateway.metrics.exporter-refresh-interval",
        "sluice.gateway.metrics.exporter-poll-interval",
        "sluice.gateway.metrics.backfill-poll-interval",
        "sluice.records.idempotency-window",
        "sluice.management.token",
        "sluice.exporting.max-pause",
        "sluice.backfill.max-tasks",
        // CONTRACT §8, the backup settings
        "sluice.backup.store",
        "sluice.backup.filesystem.path",
        "sluice.backup.s3.bucket",
        "sluice.backup.s3.endpoint",
        "sluice.backup.s3.region",
        "sluice.backup.s3.base-path",
        "sluice.backup.s3.access-key",
        "sluice.backup.s3.secret-key",
        "sluice.backup.s3.path-style-access",
        "sluice.backup.hold-timeout",
        "sluice.backup.upload-timeout",
        "sluice.backup.retention.max-count");

    /** Groups whose members are checked elsewhere: each exporter's settings by its kind (ExporterRegistry). */
    static final List<String> GROUPS = List.of("sluice.exporters");

    /**
     * Environment variables of the distribution's tools that share the prefix but are no settings: the admin CLI's
     * (CONTRACT §6), the backup hook's and {@code qa/bench.sh}'s (its benchmarks start processes that inherit it).
     * Exact names, environment only.
     */
    static final Set<String> TOOL_VARIABLES = Set.of("SLUICE_GATEWAY", "SLUICE_TOKEN", "SLUICE_CA_CERT", "SLUICE_JAR",
        "SLUICE_CLI_JAVA_OPTS", "SLUICE_BENCH_BUILD");

    private static final int MAX_SUGGESTION_DISTANCE = 3;

    @Override
    public void onApplicationEvent(final ApplicationEnvironmentPreparedEvent event)
    {
        check(event.getEnvironment());
    }

    /** After Spring's own listeners (logging is configured, so the failure is reported by SluiceMain alone). */
    @Override
    public int getOrder()
    {
        return Ordered.LOWEST_PRECEDENCE;
    }

    /**
     * @throws InvalidClusterConfigException naming the first unknown {@code sluice.*} setting, as it was given.
     */
    public static void check(final ConfigurableEnvironment environment)
    {
        for (final PropertySource<?> source : environment.getPropertySources())
        {
            if (StandardEnvironment.SYSTEM_PROPERTIES_PROPERTY_SOURCE_NAME.equals(source.getName()) ||
                !(source instanceof EnumerablePropertySource<?> enumerable) ||
                source.getSource() instanceof Iterable<?>) // Spring's attached view over all the others
            {
                continue;
            }
            final boolean environmentVariables =
                StandardEnvironment.SYSTEM_ENVIRONMENT_PROPERTY_SOURCE_NAME.equals(source.getName());
            final List<String> names = new ArrayList<>(List.of(enumerable.getPropertyNames()));
            names.sort(null);
            for (final String name : names)
            {
                if (environmentVariables ? isUnknownVariable(name) : isUnknownProperty(name))
                {
                    final String suggestion = suggestion(name);
                    throw new InvalidClusterConfigException(name, "unknown setting" + (suggestion == null ?
                        " (see the settings in README.md and docs/operations.md)" : " (did you mean " + suggestion + "?)"));
                }
            }
        }
    }

    /** Whether a property ({@code --name=value}, a configuration file's key) is a {@code sluice.*} name not known. */
    static boolean isUnknownProperty(final String name)
    {
        final List<String> elements = elements(name, "[.]");
        return !elements.isEmpty() && elements.get(0).equals("sluice") && !known(elements);
    }

    /** Whether an environment variable is a {@code SLUICE_*} name that is neither a setting nor a tool's variable. */
    static boolean isUnknownVariable(final String name)
    {
        if (!name.toUpperCase(Locale.ROOT).startsWith("SLUICE_") || TOOL_VARIABLES.contains(name))
        {
            return false;
        }
        return !known(elements(name, "_"));
    }

    private static boolean known(final List<String> elements)
    {
        final String joined = String.join("", elements);
        for (final String setting : SETTINGS)
        {
            if (canonical(setting).equals(joined))
            {
                return true;
            }
        }
        for (final String group : GROUPS)
        {
            // at an element boundary, with something below: sluice.exporters.s3.type, not sluice.exporterss3.type
            final String prefix = canonical(group);
            final StringBuilder head = new StringBuilder();
            for (int i = 0; i < elements.size() - 1; i++)
            {
                head.append(elements.get(i));
                if (head.toString().equals(prefix))
                {
                    return true;
                }
            }
        }
        return false;
    }

    /** A name's elements in canonical form, list indexes ({@code brokers[0]}) dropped. */
    private static List<String> elements(final String name, final String separator)
    {
        final List<String> elements = new ArrayList<>();
        for (final String element : name.replaceAll("\\[[^]]*]", "").split(separator))
        {
            final String canonical = canonical(element);
            if (!canonical.isEmpty())
            {
                elements.add(canonical);
            }
        }
        return elements;
    }

    private static String canonical(final String name)
    {
        return name.toLowerCase(Locale.ROOT).replaceAll("[^a-z0-9]", "");
    }

    /** The known setting closest to {@code name}, if close enough to be a typo of it. */
    private static String suggestion(final String name)
    {
        final String given = canonical(name);
        String best = null;
        int bestDistance = MAX_SUGGESTION_DISTANCE + 1;
        for (final String setting : SETTINGS)
        {
            final int distance = distance(given, canonical(setting));
            if (distance < bestDistance)
            {
                best = setting;
                bestDistance = distance;
            }
        }
        return best;
    }

    private static int distance(final String a, final String b)
    {
        int[] previous = new int[b.length() + 1];
        int[] current = new int[b.length() + 1];
        for (int j = 0; j <= b.length(); j++)
        {
            previous[j] = j;
        }
        for (int i = 1; i <= a.length(); i++)
        {
            current[0] = i;
            for (int j = 1; j <= b.length(); j++)
            {
                current[j] = Math.min(Math.min(current[j - 1] + 1, previous[j] + 1),
                    previous[j - 1] + (a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1));
            }
            final int[] swap = previous;
            previous = current;
            current = swap;
        }
        return previous[b.length()];
    }
}
