package io.sluice.dist;

import io.sluice.protocol.tls.TestCertificates;
import io.sluice.protocol.tls.TlsFiles;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/** Bad configuration stops the process with one line naming the setting and a non-zero exit code. */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class SluiceMainTest
{
    @TempDir
    Path dataDir;

    @Test
    void unknownModePrintsUsageAndExits2()
    {
        final Result result = launch("bogus");

        assertThat(result.exitCode).isEqualTo(SluiceMain.EXIT_USAGE);
        assertThat(result.err).contains("unknown mode 'bogus'").contains("usage:");
    }

    @Test
    void brokerWithoutNodeIdNamesTheSetting()
    {
        assertThat(startupFailure("broker", "--sluice.data-dir=" + dataDir))
            .startsWith("sluice: sluice.broker.node-id: required");
    }

    @Test
    void brokerWithUnknownNodeIdNamesTheSetting()
    {
        assertThat(startupFailure("broker", "--sluice.broker.node-id=7", "--sluice.data-dir=" + dataDir))
            .startsWith("sluice: sluice.broker.node-id: 7 is not a broker");
    }

    @Test
    void replicationFactorOverClusterSizeNamesTheSetting()
    {
        assertThat(startupFailure("broker", "--sluice.broker.node-id=0", "--sluice.cluster.replication-factor=4",
            "--sluice.data-dir=" + dataDir))
            .startsWith("sluice: sluice.cluster.replication-factor: 4 exceeds the cluster size 3");
    }

    @Test
    void malformedBrokerListNamesTheSetting()
    {
        assertThat(startupFailure("gateway", "--sluice.cluster.brokers=127.0.0.1:26501,nonsense", "--server.port=0",
            "--management.server.port=0"))
            .startsWith("sluice: sluice.cluster.brokers: 'nonsense' is not host:port");
    }

    @Test
    void unparsableNumberNamesTheSetting()
    {
        assertThat(startupFailure("broker", "--sluice.broker.node-id=one", "--sluice.data-dir=" + dataDir))
            .startsWith("sluice: sluice.broker.node-id: cannot use 'one'");
    }

    @Test
    void exporterWithoutTypeNamesTheSetting()
    {
        assertThat(startupFailure("broker", "--sluice.broker.node-id=0", "--sluice.exporters.audit.path=/tmp/x",
            "--sluice.data-dir=" + dataDir))
            .startsWith("sluice: sluice.exporters.audit.type: required");
    }

    @Test
    void kafkaExporterWithoutBootstrapServersNamesTheSetting()
    {
        assertThat(startupFailure("broker", "--sluice.broker.node-id=0", "--sluice.exporters.events.type=kafka",
            "--sluice.data-dir=" + dataDir))
            .startsWith("sluice: sluice.exporters.events.bootstrap-servers: required");
    }

    @Test
    void kafkaProducerSettingThatWouldWeakenDeliveryNamesTheSetting()
    {
        assertThat(startupFailure("broker", "--sluice.broker.node-id=0", "--sluice.exporters.events.type=kafka",
            "--sluice.exporters.events.bootstrap-servers=127.0.0.1:9092", "--sluice.exporters.events.producer.acks=1",
            "--sluice.data-dir=" + dataDir))
            .startsWith("sluice: sluice.exporters.events.producer.acks: '1': the exporter needs acks=all");
    }

    @Test
    void thirdPartyExporterWithAMissingJarNamesTheSetting()
    {
        final Path jar = dataDir.resolve("missing.jar").toAbsolutePath();
        assertThat(startupFailure("broker", "--sluice.broker.node-id=0",
            "--sluice.exporters.audit.class-name=com.example.AuditExporter", "--sluice.exporters.audit.jar=" + jar,
            "--sluice.data-dir=" + dataDir))
            .isEqualTo("sluice: sluice.exporters.audit.jar: no readable file " + jar);
    }

    @Test
    void thirdPartyExporterJarWithoutAClassNamesTheSetting()
    {
        assertThat(startupFailure("broker", "--sluice.broker.node-id=0", "--sluice.exporters.audit.jar=/tmp/a.jar",
            "--sluice.data-dir=" + dataDir))
            .startsWith("sluice: sluice.exporters.audit.class-name: required with sluice.exporters.audit.jar");
    }

    @Test
    void thirdPartyExporterWithATypeToo()
    {
        assertThat(startupFailure("broker", "--sluice.broker.node-id=0", "--sluice.exporters.audit.type=file",
            "--sluice.exporters.audit.class-name=com.example.AuditExporter", "--sluice.exporters.audit.jar=/tmp/a.jar",
            "--sluice.data-dir=" + dataDir))
            .startsWith("sluice: sluice.exporters.audit.type: 'file' given with sluice.exporters.audit.class-name");
    }

    @Test
    void gatewayPortInUseNamesTheSetting() throws IOException
    {
        try (ServerSocket busy = new ServerSocket(0))
        {
            assertThat(startupFailure("gateway", "--server.port=" + busy.getLocalPort(), "--management.server.port=0"))
                .isEqualTo("sluice: server.port: port " + busy.getLocalPort() + " is already in use");
        }
    }

    @Test
    void brokerPortInUseNamesTheSetting() throws IOException
    {
        try (ServerSocket busy = new ServerSocket(0))
        {
            final String brokers = "127.0.0.1:" + busy.getLocalPort() + ",127.0.0.1:1,127.0.0.1:3";
            assertThat(startupFailure("broker", "--sluice.broker.node-id=0", "--sluice.cluster.brokers=" + brokers,
                "--sluice.data-dir=" + dataDir))
                .startsWith("sluice: sluice.cluster.brokers: ").contains(Integer.toString(busy.getLocalPort()));
        }
    }

    @Test
    void brokerWithAMissingTlsCertificateNamesTheSetting() throws IOException
    {
        final TlsFiles files = TestCertificates.authority(dataDir.resolve("tls"), "ca").issue("broker-0");
        assertThat(startupFailure("broker", "--sluice.broker.node-id=0", "--sluice.data-dir=" + dataDir,
            "--sluice.cluster.tls.enabled=true", "--sluice.cluster.tls.certificate=" + dataDir.resolve("missing.pem"),
            "--sluice.cluster.tls.private-key=" + files.privateKey(),
            "--sluice.cluster.tls.trusted-certificates=" + files.trustedCertificates()))
            .startsWith("sluice: sluice.cluster.tls.certificate: file ").endsWith("missing.pem does not exist");
    }

    @Test
    void gatewayWithTheKeyOfAnotherCertificateNamesTheSetting() throws IOException
    {
        final TestCertificates ca = TestCertificates.authority(dataDir.resolve("tls"), "ca");
        final TlsFiles gateway = ca.issue("gateway");
        final TlsFiles other = ca.issue("other");
        assertThat(startupFailure("gateway", "--server.port=0", "--management.server.port=0",
            "--sluice.cluster.tls.enabled=true", "--sluice.cluster.tls.certificate=" + gateway.certificate(),
            "--sluice.cluster.tls.private-key=" + other.privateKey(),
            "--sluice.cluster.tls.trusted-certificates=" + gateway.trustedCertificates()))
            .startsWith("sluice: sluice.cluster.tls.private-key: the private key in ")
            .contains("does not belong to the certificate");
    }

    @Test
    void brokerWithAnExpiredCertificateNamesTheSetting() throws Exception
    {
        final TlsFiles expired = TestCertificates.authority(dataDir.resolve("tls"), "ca").issue("broker-0", 0);
        Thread.sleep(1_100); // openssl's -days 0 makes it valid until the second it was made
        assertThat(startupFailure("broker", "--sluice.broker.node-id=0", "--sluice.data-dir=" + dataDir,
            "--sluice.cluster.tls.enabled=true", "--sluice.cluster.tls.certificate=" + expired.certificate(),
            "--sluice.cluster.tls.private-key=" + expired.privateKey(),
            "--sluice.cluster.tls.trusted-certificates=" + expired.trustedCertificates()))
            .startsWith("sluice: sluice.cluster.tls.certificate: the certificate in ").contains("expired at");
    }

    /** Launches with {@code args}, expects the startup to fail, and returns its one line on stderr. */
    private static String startupFailure(final String... args)
    {
        final Result result = launch(args);
        assertThat(result.exitCode).as(result.err).isEqualTo(SluiceMain.EXIT_STARTUP_FAILED);
        return result.oneLine();
    }

    static Result launch(final String... args)
    {
        final ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        final SluiceMain.Launch launch;
        try (PrintStream err = new PrintStream(bytes, true, StandardCharsets.UTF_8))
        {
            launch = SluiceMain.launch(args, err);
        }
        if (launch.context() != null)
        {
            launch.context().close();
        }
        return new Result(launch.exitCode(), bytes.toString(StandardCharsets.UTF_8));
    }

    record Result(int exitCode, String err)
    {
        String oneLine()
        {
            assertThat(err.lines().count()).as(err).isEqualTo(1);
            return err.strip();
        }
    }
}
