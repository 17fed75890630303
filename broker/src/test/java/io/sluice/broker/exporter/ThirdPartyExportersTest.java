package io.sluice.broker.exporter;

import io.sluice.exporter.spi.Exporter;
import io.sluice.exporter.spi.ExporterContext;
import io.sluice.exporter.spi.ExporterJars;
import io.sluice.protocol.cluster.InvalidClusterConfigException;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Third-party exporters: loaded from a jar compiled by the test, in a class loader that sees only the SPI. */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class ThirdPartyExportersTest
{
    @TempDir
    static Path jars;
    private static Path auditJar;

    @TempDir
    Path dir;

    @BeforeAll
    static void buildJar() throws Exception
    {
        auditJar = ExporterJars.buildAuditExporter(jars);
    }

    @Test
    void exportsThroughTheSpiWithItsArgsAndSeesNothingOfTheBroker() throws Exception
    {
        final Path out = dir.resolve("out");
        final ExporterConfig config = ExporterConfig.thirdParty("audit", ExporterJars.AUDIT_EXPORTER,
            auditJar.toString(), Map.of("out", out.toString(), "greeting", "hello"));
        final ExporterRegistry registry = ExporterRegistry.builtIn();
        registry.validate(0, dir, Map.of("audit", config));

        final Exporter exporter = registry.create(config);
        final AtomicLong acknowledged = new AtomicLong();
        exporter.configure(new ExporterContext("audit", 3, 0, dir, config.properties()));
        exporter.open(position -> acknowledged.accumulateAndGet(position, Math::max));
        final byte[] bytes = "order-42{\"amount\":7}".getBytes(StandardCharsets.UTF_8);
        final CommittedRecordView record = new CommittedRecordView(3);
        exporter.export(record.wrap(11, 1_000, new UnsafeBuffer(bytes), 0, 8, 8, bytes.length - 8));
        exporter.export(record.wrap(12, 1_001, new UnsafeBuffer(bytes), 0, -1, 8, bytes.length - 8));
        exporter.flush();
        exporter.close();

        assertThat(acknowledged.get()).isEqualTo(12);
        assertThat(Files.readAllLines(out.resolve("partition-3.jsonl"))).containsExactly(
            "{\"partitionId\":3,\"position\":11,\"key\":\"order-42\",\"timestamp\":1000,\"payload\":{\"amount\":7}}",
            "{\"partitionId\":3,\"position\":12,\"key\":null,\"timestamp\":1001,\"payload\":{\"amount\":7}}");
        final List<String> probe = Files.readAllLines(out.resolve("probe-3.txt"));
        assertThat(probe).contains(
            "io.sluice.exporter.spi.RecordJson=visible visible",
            "org.agrona.DirectBuffer=visible visible",
            "java.net.http.HttpClient=visible visible",
            "io.sluice.broker.Broker=hidden hidden",
            "io.sluice.broker.exporter.FileExporter=hidden hidden",
            "io.sluice.protocol.codecs.ExportingState=hidden hidden",
            "org.slf4j.LoggerFactory=hidden hidden",
            "org.apache.ratis.server.RaftServer=hidden hidden",
            "org.apache.kafka.clients.producer.KafkaProducer=hidden hidden",
            "args={greeting=hello, out=" + out + "}");
        assertThat(Thread.currentThread().getContextClassLoader()).as("context class loader restored")
            .isSameAs(ThirdPartyExportersTest.class.getClassLoader());
    }

    @Test
    void aMissingJarNamesTheJarSetting()
    {
        assertRefused(ExporterConfig.thirdParty("audit", ExporterJars.AUDIT_EXPORTER, dir.resolve("nope.jar").toString(),
            Map.of("out", "x")), "sluice.exporters.audit.jar: no readable file");
    }

    @Test
    void aFileThatIsNotAJarNamesTheJarSetting() throws Exception
    {
        final Path notAJar = Files.writeString(dir.resolve("exporter.jar"), "not a zip");
        assertRefused(ExporterConfig.thirdParty("audit", ExporterJars.AUDIT_EXPORTER, notAJar.toString(),
            Map.of("out", "x")), "sluice.exporters.audit.jar: " + notAJar + " is not a jar");
    }

    @Test
    void aClassThatIsNotInTheJarNamesTheClassNameSetting()
    {
        assertRefused(ExporterConfig.thirdParty("audit", "com.example.audit.Missing", auditJar.toString(),
            Map.of("out", "x")), "sluice.exporters.audit.class-name: class com.example.audit.Missing not found in");
    }

    @Test
    void aBrokerClassIsNotFoundThroughTheExportersJar()
    {
        assertRefused(ExporterConfig.thirdParty("audit", FileExporter.class.getName(), auditJar.toString(),
            Map.of("out", "x")), "sluice.exporters.audit.class-name: class " + FileExporter.class.getName() +
            " not found in");
    }

    @Test
    void aClassThatIsNotAnExporterNamesTheClassNameSetting() throws Exception
    {
        final Path jar = ExporterJars.build(dir, "plain.jar",
            Map.of("com.example.Plain", "package com.example; public class Plain { }"));
        assertRefused(ExporterConfig.thirdParty("plain", "com.example.Plain", jar.toString(), Map.of()),
            "sluice.exporters.plain.class-name: com.example.Plain does not implement io.sluice.exporter.spi.Exporter");
    }

    @Test
    void aSettingTheExporterRefusesIsNamedUnderItsArgs()
    {
        assertRefused(ExporterConfig.thirdParty("audit", ExporterJars.AUDIT_EXPORTER, auditJar.toString(), Map.of()),
            "sluice.exporters.audit.args.out: required");
    }

    private void assertRefused(final ExporterConfig config, final String message)
    {
        assertThatThrownBy(() -> ExporterRegistry.builtIn().validate(0, dir, Map.of(config.id(), config)))
            .isInstanceOf(InvalidClusterConfigException.class)
            .hasMessageStartingWith(message);
    }
}
