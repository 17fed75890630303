package io.sluice.qa.operator;

import io.sluice.protocol.tls.TestCertificates;
import io.sluice.protocol.tls.TlsFiles;
import io.sluice.qa.Exporting;
import io.sluice.qa.Records;
import io.sluice.qa.cluster.HttpAnswer;
import io.sluice.qa.cluster.QaRun;
import io.sluice.qa.cluster.SluiceCluster;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Issue 16: the gateway's client and management ports over HTTPS (a Spring Boot PEM SSL bundle with a
 * certificate of a CA made at run time), and the operator tools against it with that CA: the CLI's
 * {@code --ca-cert} and the backup hook, which passes it through.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(value = 6, unit = TimeUnit.MINUTES)
class HttpsGatewayAgainstClusterIT
{
    @RegisterExtension
    static final QaRun RUN = new QaRun();

    private Path ca;
    private SluiceCluster cluster;

    @BeforeAll
    void startCluster() throws IOException
    {
        final TestCertificates authority = TestCertificates.authority(RUN.directory().resolve("certificates"), "https");
        final TlsFiles gateway = authority.issue("gateway");
        ca = authority.certificate();
        cluster = RUN.cluster("cluster", builder -> builder.partitions(3).https(ca)
            .gatewayProperty("spring.ssl.bundle.pem.gateway.keystore.certificate", gateway.certificate().toString())
            .gatewayProperty("spring.ssl.bundle.pem.gateway.keystore.private-key", gateway.privateKey().toString())
            .gatewayProperty("server.ssl.bundle", "gateway")
            .gatewayProperty("management.server.ssl.bundle", "gateway"));
        cluster.start();
        cluster.awaitReady();
    }

    @Test
    void bothPortsServeHttpsAndRefusePlainHttp() throws Exception
    {
        assertThat(cluster.client().clientBase().getScheme()).isEqualTo("https");
        Records.awaitExported(cluster, Records.write(cluster, "https", 20));
        final HttpAnswer health = cluster.client().get("/actuator/health");
        assertThat(health.status()).isEqualTo(200);
        // Spring Boot's ssl health component watches the bundle's certificate too.
        assertThat(health.body()).contains("\"ssl\"");

        final HttpClient plain = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
        for (final URI base : List.of(cluster.client().clientBase(), cluster.client().managementBase()))
        {
            final URI http = URI.create("http://" + base.getHost() + ":" + base.getPort() + "/actuator/health");
            final int status;
            try
            {
                status = plain.send(HttpRequest.newBuilder(http).timeout(Duration.ofSeconds(10)).GET().build(),
                    HttpResponse.BodyHandlers.ofString()).statusCode();
            }
            catch (final IOException refused)
            {
                continue; // the TLS port closed the plain connection: refused as well
            }
            assertThat(status).as("plain http to %s", http).isEqualTo(400);
        }
    }

    @Test
    void theCliPausesAndResumesOverHttpsWithTheCaAndIsUnreachableWithoutIt() throws Exception
    {
        final Path folder = Files.createDirectories(RUN.directory().resolve("cli"));
        final String gateway = cluster.client().managementBase().toString();

        final CliResult pause = AdminCliProcess.run(folder, "exporting", "pause", "--gateway", gateway,
            "--ca-cert", ca.toString());
        assertThat(pause.exitCode()).as("%s", pause).isZero();
        Exporting.awaitClusterState(cluster, "PAUSED");
        final CliResult resume = AdminCliProcess.run(folder, "exporting", "resume", "--gateway", gateway,
            "--ca-cert", ca.toString());
        assertThat(resume.exitCode()).as("%s", resume).isZero();
        Exporting.awaitClusterState(cluster, "EXPORTING");

        final CliResult untrusted = AdminCliProcess.run(folder, "exporting", "status", "--gateway", gateway);
        assertThat(untrusted.exitCode()).as("%s", untrusted).isEqualTo(4);
        final CliResult missingFile = AdminCliProcess.run(folder, "exporting", "status", "--gateway", gateway,
            "--ca-cert", folder.resolve("no-such-ca.pem").toString());
        assertThat(missingFile.exitCode()).as("%s", missingFile).isEqualTo(3);
        assertThat(missingFile.stderr()).contains("--ca-cert").contains("no-such-ca.pem");
    }

    @Test
    void theBackupHookPassesTheCaThroughToTheCli() throws Exception
    {
        final Path folder = Files.createDirectories(RUN.directory().resolve("hook"));
        final Path jar = SluiceCluster.jar();
        final Path hookScript = jar.getParent().getParent().resolve("bin").resolve("backup-hook.sh");
        final Path marker = folder.resolve("backup-ran");
        final ProcessBuilder builder = new ProcessBuilder("bash", hookScript.toString(),
            "--gateway", cluster.client().managementBase().toString(), "--ca-cert", ca.toString(), "--retries", "3",
            "--", "touch", marker.toString())
            .directory(folder.toFile())
            .redirectOutput(folder.resolve("hook.out").toFile())
            .redirectError(folder.resolve("hook.err").toFile());
        builder.environment().remove("SLUICE_GATEWAY");
        builder.environment().remove("SLUICE_TOKEN");
        builder.environment().remove("SLUICE_CA_CERT");
        builder.environment().put("SLUICE_JAR", jar.toString());
        builder.environment().put("JAVA", Path.of(System.getProperty("java.home"), "bin", "java").toString());
        final Process hook = builder.start();
        try
        {
            assertThat(hook.waitFor(Hooks.HOOK_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)).isTrue();
            assertThat(hook.exitValue()).as("hook stderr: %s", Hooks.read(folder.resolve("hook.err"))).isZero();
        }
        finally
        {
            hook.destroyForcibly();
        }
        assertThat(marker).exists();
        Exporting.awaitClusterState(cluster, "EXPORTING");
    }
}
