package io.sluice.dist;

import io.sluice.gateway.config.ClusterProperties;
import io.sluice.gateway.config.GatewayProperties;
import io.sluice.gateway.config.RecordsProperties;
import io.sluice.protocol.cluster.InvalidClusterConfigException;
import org.junit.jupiter.api.Test;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.core.env.MutablePropertySources;
import org.springframework.core.env.SimpleCommandLinePropertySource;
import org.springframework.core.env.StandardEnvironment;
import org.springframework.core.env.SystemEnvironmentPropertySource;

import java.beans.Introspector;
import java.beans.PropertyDescriptor;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

final class KnownSettingsTest
{
    private static StandardEnvironment environment(final Map<String, Object> variables, final String... args)
    {
        final StandardEnvironment environment = new StandardEnvironment();
        final MutablePropertySources sources = environment.getPropertySources();
        sources.replace(StandardEnvironment.SYSTEM_ENVIRONMENT_PROPERTY_SOURCE_NAME,
            new SystemEnvironmentPropertySource(StandardEnvironment.SYSTEM_ENVIRONMENT_PROPERTY_SOURCE_NAME, variables));
        sources.addFirst(new SimpleCommandLinePropertySource(args));
        return environment;
    }

    @Test
    void aTypoInASluiceSettingIsRefusedNamingItAndTheSettingItResembles()
    {
        assertThatThrownBy(() -> KnownSettings.check(environment(Map.of(),
            "--sluice.broker.disk.free-space-reserv=1GB")))
            .isInstanceOf(InvalidClusterConfigException.class)
            .hasMessage("sluice.broker.disk.free-space-reserv: unknown setting " +
                "(did you mean sluice.broker.disk.free-space-reserve?)")
            .satisfies(e -> assertThat(((InvalidClusterConfigException)e).setting())
                .isEqualTo("sluice.broker.disk.free-space-reserv"));
        assertThatThrownBy(() -> KnownSettings.check(environment(Map.of("SLUICE_BROKER_DISK_FREESPACERESERV", "1GB"))))
            .hasMessage("SLUICE_BROKER_DISK_FREESPACERESERV: unknown setting " +
                "(did you mean sluice.broker.disk.free-space-reserve?)");
        assertThatThrownBy(() -> KnownSettings.check(environment(Map.of(), "--sluice.wibble=1")))
            .hasMessageStartingWith("sluice.wibble: unknown setting (see the settings");
    }

    @Test
    void everySpellingSpringBindsIsKnown()
    {
        KnownSettings.check(environment(Map.of(
                "SLUICE_BROKER_NODEID", "0", "SLUICE_BROKER_NODE_ID", "0", "SLUICE_CLUSTER_REPLICATIONFACTOR", "3",
                "SLUICE_DATADIR", "/d", "SLUICE_CLUSTER_TLS_PRIVATEKEY", "k", "SLUICE_GATEWAY_REQUESTTIMEOUT", "5s",
                "PATH", "/bin", "SLUICEISH", "x"),
            "--sluice.broker.node-id=0", "--sluice.broker.nodeId=0", "--sluice.data-dir=/d",
            "--sluice.cluster.brokers[0]=a:1", "--server.port=0", "--spring.main.banner-mode=off"));
    }

    @Test
    void exporterSettingsAreLeftToTheExporterChecksButOnlyUnderExporters()
    {
        KnownSettings.check(environment(Map.of("SLUICE_EXPORTERS_BUS_TYPE", "kafka",
            "SLUICE_EXPORTERS_BUS_BOOTSTRAPSERVERS", "k:1"), "--sluice.exporters.search.bulk.max-bytes=1MB"));
        assertThatThrownBy(() -> KnownSettings.check(environment(Map.of(), "--sluice.exporter.bus.type=kafka")))
            .hasMessageStartingWith("sluice.exporter.bus.type: unknown setting");
        assertThatThrownBy(() -> KnownSettings.check(environment(Map.of(), "--sluice.exporters=x")))
            .hasMessageStartingWith("sluice.exporters: unknown setting");
    }

    @Test
    void theToolsOwnVariablesAndJvmSystemPropertiesAreNoSettings()
    {
        KnownSettings.check(environment(Map.of("SLUICE_TOKEN", "t", "SLUICE_GATEWAY", "http://g:9600",
            "SLUICE_CA_CERT", "/ca.pem", "SLUICE_JAR", "/opt/sluice.jar")));
        final StandardEnvironment environment = environment(Map.of());
        environment.getPropertySources().replace(StandardEnvironment.SYSTEM_PROPERTIES_PROPERTY_SOURCE_NAME,
            new org.springframework.core.env.MapPropertySource(StandardEnvironment.SYSTEM_PROPERTIES_PROPERTY_SOURCE_NAME,
                Map.of("sluice.qa.run", "/tmp/x")));
        KnownSettings.check(environment);
    }

    /** The variables of the script the backup CronJob ran before it called the CLI are read by nothing any more. */
    @Test
    void theRetiredCronJobScriptsVariablesAreRefused()
    {
        assertThatThrownBy(() -> KnownSettings.check(environment(Map.of("SLUICE_SNAPSHOT_TIMEOUT", "60"))))
            .hasMessageStartingWith("SLUICE_SNAPSHOT_TIMEOUT: unknown setting");
    }

    /** A field added to a settings class without its name here would make every start with it set fail. */
    @Test
    void everyBoundSettingOfTheSettingsClassesIsKnown() throws IOException
    {
        final List<String> bound = new ArrayList<>();
        for (final Class<?> type : List.of(ClusterProperties.class, GatewayProperties.class, RecordsProperties.class,
            SluiceProperties.class))
        {
            leaves(type.getAnnotation(ConfigurationProperties.class).prefix(), type, bound);
        }
        try (Stream<Path> sources = Files.walk(Path.of("..", "gateway", "src", "main", "java")))
        {
            final Pattern value = Pattern.compile("\\$\\{(sluice\\.[a-z0-9.-]+)[:}]");
            for (final Path source : sources.filter(path -> path.toString().endsWith(".java")).toList())
            {
                final Matcher matcher = value.matcher(Files.readString(source));
                while (matcher.find())
                {
                    bound.add(matcher.group(1));
                }
            }
        }
        assertThat(bound).hasSizeGreaterThan(20);
        assertThat(bound).allSatisfy(name -> assertThat(KnownSettings.isUnknownProperty(name)).as(name).isFalse());
    }

    private static void leaves(final String prefix, final Class<?> type, final List<String> names)
    {
        try
        {
            for (final PropertyDescriptor property : Introspector.getBeanInfo(type, Object.class).getPropertyDescriptors())
            {
                final String name = prefix + "." + property.getName().replaceAll("([A-Z])", "-$1").toLowerCase();
                if (Map.class.isAssignableFrom(property.getPropertyType()))
                {
                    names.add(name + ".any.thing");
                }
                else if (property.getWriteMethod() == null && property.getReadMethod() != null &&
                    property.getPropertyType().getName().startsWith("io.sluice"))
                {
                    leaves(name, property.getPropertyType(), names);
                }
                else if (property.getWriteMethod() != null)
                {
                    names.add(name);
                }
            }
        }
        catch (final java.beans.IntrospectionException e)
        {
            throw new IllegalStateException(e);
        }
    }
}
