package io.sluice.dist;

import io.sluice.testing.QuietPeriod;
import io.sluice.gateway.LoopbackBrokers;
import io.sluice.protocol.cluster.PartitionDistribution;
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
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/** Bad configuration stops the process with one line naming the setting and a non-zero exit code. */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class SluiceMainIT
{
    @TempDir
    Path dataDir;

    private TestCertificates authority;

    @Test
    void unknownModePrintsUsageAndExits2()
    {
        final Result result = launch("bogus");

        assertThat(result.exitCode).isEqualTo(SluiceMain.EXIT_USAGE);
        assertThat(result.err).contains("unknown mode 'bogus'").contains("usage:");
    }

    @Test
    void helpPrintsUsageAndExits0WithoutStartingAnythingOrWritingData() throws IOException
    {
        final Path workingDirectory = Path.of("").toAbsolutePath();
        final boolean hadDefaultDataDir = Files.exists(workingDirectory.resolve("sluice-data"));
        for (final String[] args : new String[][]{{"--help"}, {"-h"}, {"help"}, {"standalone", "--help"},
            {"broker", "--help"}, {"--help", "--sluice.data-dir=" + dataDir.resolve("never")}})
        {
            final ByteArrayOutputStream out = new ByteArrayOutputStream();
            final ByteArrayOutputStream err = new ByteArrayOutputStream();
            final SluiceMain.Launch launch = SluiceMain.launch(args, new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8));

            assertThat(launch.exitCode()).as(String.join(" ", args)).isEqualTo(SluiceMain.EXIT_OK);
            assertThat(launch.context()).as("nothing started for %s", String.join(" ", args)).isNull();
            assertThat(out.toString(StandardCharsets.UTF_8)).startsWith("usage: java -jar sluice.jar")
                .contains("standalone").contains("broker").contains("gateway").contains("admin");
            assertThat(err.toString(StandardCharsets.UTF_8)).isEmpty();
        }
        assertThat(dataDir.resolve("never")).doesNotExist();
        assertThat(Files.exists(workingDirectory.resolve("sluice-data"))).as("./sluice-data").isEqualTo(hadDefaultDataDir);
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
    void brokerFindingADataDirectoryOfAnEarlierVersionStopsWithOneLineAndLeavesItAlone() throws IOException
    {
        // What a broker before the cluster control group left: Raft data, and no LAYOUT file.
        final Path raft = Files.createDirectories(dataDir.resolve("broker-0").resolve("raft").resolve("group"));
        Files.writeString(raft.resolve("raft-meta"), "term=3");

        assertThat(startupFailure("broker", "--sluice.broker.node-id=0", "--sluice.data-dir=" + dataDir))
            .startsWith("sluice: sluice.data-dir: ")
            .contains("written by a Sluice version before the cluster control group")
            .contains("start this broker on an empty data directory");
        assertThat(raft.resolve("raft-meta")).hasContent("term=3");
        assertThat(dataDir.resolve("broker-0").resolve("LAYOUT")).doesNotExist();
    }

    @Test
    void controlVotersBelowOneNamesTheSetting()
    {
        assertThat(startupFailure("broker", "--sluice.broker.node-id=0", "--sluice.cluster.control-voters=0",
            "--sluice.data-dir=" + dataDir))
            .startsWith("sluice: sluice.cluster.control-voters: must be at least 1, was 0");
    }

    @Test
    void diskHighWatermarkOutOfRangeNamesTheSetting()
    {
        assertThat(startupFailure("broker", "--sluice.broker.node-id=0", "--sluice.broker.disk.high-watermark=1.5",
            "--sluice.data-dir=" + dataDir))
            .startsWith("sluice: sluice.broker.disk.high-watermark: must be a share of the volume from 0.05 to 1.0")
            .contains("was 1.5");
        assertThat(dataDir.resolve("broker-0")).doesNotExist();
    }

    @Test
    void negativeFreeSpaceReserveNamesTheSetting()
    {
        assertThat(startupFailure("broker", "--sluice.broker.node-id=0", "--sluice.broker.disk.free-space-reserve=-1MB",
            "--sluice.data-dir=" + dataDir))
            .startsWith("sluice: sluice.broker.disk.free-space-reserve: must not be negative");
    }

    @Test
    void unparsableWatermarkNamesTheSetting()
    {
        assertThat(startupFailure("broker", "--sluice.broker.node-id=0", "--sluice.broker.disk.high-watermark=ninety",
            "--sluice.data-dir=" + dataDir))
            .startsWith("sluice: sluice.broker.disk.high-watermark: cannot use 'ninety'");
    }

    @Test
    void segmentSizeOutOfRangeNamesTheSetting()
    {
        assertThat(startupFailure("broker", "--sluice.broker.node-id=0", "--sluice.broker.segment-size=100B",
            "--sluice.data-dir=" + dataDir))
            .startsWith("sluice: sluice.broker.segment-size: '100B' is not a size from 1KB to 2GB");
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
    void anUnknownSluiceSettingStopsEveryModeNamingIt()
    {
        for (final String mode : new String[] {"standalone", "broker", "gateway"})
        {
            assertThat(startupFailure(mode, "--sluice.broker.node-id=0", "--sluice.data-dir=" + dataDir,
                "--sluice.broker.disk.free-space-reserv=1GB", "--server.port=0", "--management.server.port=0"))
                .as(mode)
                .isEqualTo("sluice: sluice.broker.disk.free-space-reserv: unknown setting " +
                    "(did you mean sluice.broker.disk.free-space-reserve?)");
        }
        assertThat(dataDir.resolve("broker-0")).as("nothing started").doesNotExist();
    }

    @Test
    void aKafkaExportersRetryBackoffCapIsTheBrokersAndNotRefusedAsAKafkaSetting()
    {
        // the cap is taken; the start then fails on the next check, the producer setting (nothing was started)
        assertThat(startupFailure("broker", "--sluice.broker.node-id=0", "--sluice.exporters.bus.type=kafka",
            "--sluice.exporters.bus.bootstrapservers=127.0.0.1:9092", "--sluice.exporters.bus.retry.max-backoff=5s",
            "--sluice.exporters.bus.producer.acks=0", "--sluice.data-dir=" + dataDir))
            .startsWith("sluice: sluice.exporters.bus.producer.acks: '0': the exporter needs acks=all");
        assertThat(startupFailure("broker", "--sluice.broker.node-id=0", "--sluice.exporters.bus.type=kafka",
            "--sluice.exporters.bus.bootstrap-servers=127.0.0.1:9092", "--sluice.exporters.bus.retry.max-backoff=later",
            "--sluice.data-dir=" + dataDir))
            .startsWith("sluice: sluice.exporters.bus.retry.max-backoff: 'later' is not a positive duration");
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
        // openssl's -days 0 makes it valid until the second it was made.
        QuietPeriod.of(Duration.ofMillis(1_100), "the certificate expires");
        assertThat(startupFailure("broker", "--sluice.broker.node-id=0", "--sluice.data-dir=" + dataDir,
            "--sluice.cluster.tls.enabled=true", "--sluice.cluster.tls.certificate=" + expired.certificate(),
            "--sluice.cluster.tls.private-key=" + expired.privateKey(),
            "--sluice.cluster.tls.trusted-certificates=" + expired.trustedCertificates()))
            .startsWith("sluice: sluice.cluster.tls.certificate: the certificate in ").contains("expired at");
    }

    @Test
    void brokerWithoutTlsAmongTlsBrokersNamesTheSettingAndThePeer() throws IOException
    {
        final String brokers = LoopbackBrokers.brokerList(3);
        final int port0 = PartitionDistribution.parseAddresses(brokers).get(0).getPort();
        final SluiceMain.Launch tlsBroker = SluiceMain.launch(withTls("broker-0", "broker", "--sluice.broker.node-id=0",
            "--sluice.cluster.brokers=" + brokers, "--sluice.data-dir=" + dataDir), quiet());
        try
        {
            assertThat(tlsBroker.exitCode()).isEqualTo(SluiceMain.EXIT_OK);
            assertThat(startupFailure("broker", "--sluice.broker.node-id=1", "--sluice.cluster.brokers=" + brokers,
                "--sluice.data-dir=" + dataDir))
                .isEqualTo("sluice: sluice.cluster.tls.enabled: false on broker 1, but broker 0 at 127.0.0.1:" + port0 +
                    " answers with TLS: set it the same on every broker and gateway");
        }
        finally
        {
            close(tlsBroker);
        }
    }

    @Test
    void brokerWithTlsAmongPlainBrokersNamesTheSettingAndThePeer() throws IOException
    {
        final String brokers = LoopbackBrokers.brokerList(3);
        final int port0 = PartitionDistribution.parseAddresses(brokers).get(0).getPort();
        final SluiceMain.Launch plainBroker = SluiceMain.launch(new String[]{"broker", "--sluice.broker.node-id=0",
            "--sluice.cluster.brokers=" + brokers, "--sluice.data-dir=" + dataDir}, quiet());
        try
        {
            assertThat(plainBroker.exitCode()).isEqualTo(SluiceMain.EXIT_OK);
            assertThat(startupFailure(withTls("broker-2", "broker", "--sluice.broker.node-id=2",
                "--sluice.cluster.brokers=" + brokers, "--sluice.data-dir=" + dataDir)))
                .isEqualTo("sluice: sluice.cluster.tls.enabled: true on broker 2, but broker 0 at 127.0.0.1:" + port0 +
                    " answers without TLS: set it the same on every broker and gateway");
            assertThat(startupFailure(withTls("gateway", "gateway", "--sluice.cluster.brokers=" + brokers,
                "--server.port=0", "--management.server.port=0")))
                .isEqualTo("sluice: sluice.cluster.tls.enabled: true on the gateway, but broker 0 at 127.0.0.1:" +
                    port0 + " answers without TLS: set it the same on every broker and gateway");
        }
        finally
        {
            close(plainBroker);
        }
    }

    @Test
    void brokerWhosePeersAreAllDownStartsWithTlsOrWithout() throws IOException
    {
        for (final boolean tls : new boolean[]{true, false})
        {
            final String brokers = LoopbackBrokers.brokerList(3);
            final String[] args = {"broker", "--sluice.broker.node-id=1", "--sluice.cluster.brokers=" + brokers,
                "--sluice.data-dir=" + dataDir.resolve("tls-" + tls)};
            final ByteArrayOutputStream err = new ByteArrayOutputStream();
            final SluiceMain.Launch broker = SluiceMain.launch(tls ? withTls("broker-1", args) : args,
                new PrintStream(err, true, StandardCharsets.UTF_8));
            try
            {
                assertThat(broker.exitCode()).as(err.toString(StandardCharsets.UTF_8)).isEqualTo(SluiceMain.EXIT_OK);
            }
            finally
            {
                close(broker);
            }
        }
    }

    /** {@code args} and the cluster TLS settings of a certificate for {@code peer} from this test's CA. */
    private String[] withTls(final String peer, final String... args) throws IOException
    {
        final TlsFiles files = authority().issue(peer);
        final String[] all = Arrays.copyOf(args, args.length + 4);
        all[args.length] = "--sluice.cluster.tls.enabled=true";
        all[args.length + 1] = "--sluice.cluster.tls.certificate=" + files.certificate();
        all[args.length + 2] = "--sluice.cluster.tls.private-key=" + files.privateKey();
        all[args.length + 3] = "--sluice.cluster.tls.trusted-certificates=" + files.trustedCertificates();
        return all;
    }

    private TestCertificates authority() throws IOException
    {
        if (authority == null)
        {
            authority = TestCertificates.authority(Files.createDirectories(dataDir.resolve("tls")), "ca");
        }
        return authority;
    }

    private static PrintStream quiet()
    {
        return new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8);
    }

    private static void close(final SluiceMain.Launch launch)
    {
        if (launch.context() != null)
        {
            launch.context().close();
        }
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
