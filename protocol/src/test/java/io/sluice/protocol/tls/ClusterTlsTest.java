package io.sluice.protocol.tls;

import io.sluice.protocol.cluster.InvalidClusterConfigException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/** Bad TLS files stop a process with one line naming the setting; good ones are re-read when they change. */
class ClusterTlsTest
{
    @TempDir
    Path dir;

    @Test
    void aMissingFileNamesItsSetting() throws Exception
    {
        final TlsFiles files = TestCertificates.authority(dir, "a").issue("broker-0");
        assertThatThrownBy(() -> ClusterTls.load(new TlsFiles(dir.resolve("nope.pem"), files.privateKey(),
            files.trustedCertificates())))
            .isInstanceOf(InvalidClusterConfigException.class)
            .hasMessageStartingWith("sluice.cluster.tls.certificate: file ")
            .hasMessageContaining("nope.pem does not exist");
        assertThatThrownBy(() -> ClusterTls.load(new TlsFiles(files.certificate(), files.privateKey(), null)))
            .isInstanceOf(InvalidClusterConfigException.class)
            .hasMessage("sluice.cluster.tls.trusted-certificates: required when sluice.cluster.tls.enabled=true");
    }

    @Test
    void aKeyThatDoesNotBelongToTheCertificateIsRefused() throws Exception
    {
        final TestCertificates ca = TestCertificates.authority(dir, "a");
        final TlsFiles one = ca.issue("broker-0");
        final TlsFiles other = ca.issue("broker-1");
        assertThatThrownBy(() -> ClusterTls.load(new TlsFiles(one.certificate(), other.privateKey(), one.trustedCertificates())))
            .isInstanceOf(InvalidClusterConfigException.class)
            .hasMessageStartingWith("sluice.cluster.tls.private-key: the private key in ")
            .hasMessageContaining("does not belong to the certificate");
    }

    @Test
    void anExpiredCertificateAndAFileThatIsNotPemAreRefused() throws Exception
    {
        final TestCertificates ca = TestCertificates.authority(dir, "a");
        final TlsFiles expired = ca.issue("broker-0", 0);
        final Clock later = Clock.fixed(Instant.now().plusSeconds(5), ZoneOffset.UTC);
        assertThatThrownBy(() -> ClusterTls.load(expired, later))
            .isInstanceOf(InvalidClusterConfigException.class)
            .hasMessageStartingWith("sluice.cluster.tls.certificate: the certificate in ")
            .hasMessageContaining("expired at");

        final Path garbage = Files.writeString(dir.resolve("garbage.pem"), "not a certificate");
        final TlsFiles good = ca.issue("broker-1");
        assertThatThrownBy(() -> ClusterTls.load(new TlsFiles(good.certificate(), good.privateKey(), garbage)))
            .isInstanceOf(InvalidClusterConfigException.class)
            .hasMessageStartingWith("sluice.cluster.tls.trusted-certificates: ");
        assertThatThrownBy(() -> ClusterTls.load(new TlsFiles(good.certificate(), garbage, good.trustedCertificates())))
            .isInstanceOf(InvalidClusterConfigException.class)
            .hasMessageStartingWith("sluice.cluster.tls.private-key: ")
            .hasMessageContaining("PKCS#8");
    }

    @Test
    void aCertificateExpiringWithinSevenDaysIsReported() throws Exception
    {
        final TestCertificates ca = TestCertificates.authority(dir, "a");
        final ClusterTls soon = ClusterTls.load(ca.issue("broker-0", 3));
        assertThat(soon.expiresWithin(Duration.ofDays(7))).isTrue();
        final ClusterTls later = ClusterTls.load(ca.issue("broker-1", 30));
        assertThat(later.expiresWithin(Duration.ofDays(7))).isFalse();
        assertThat(later.notAfter()).isAfter(Instant.now().plus(Duration.ofDays(29)));
    }

    @Test
    void replacedFilesAreReadAgainAndBadReplacementsKeepThePreviousOnes() throws Exception
    {
        final TestCertificates ca = TestCertificates.authority(dir, "a");
        final TlsFiles files = ca.issue("broker-0", 3);
        final ClusterTls tls = ClusterTls.load(files);
        assertThat(tls.expiresWithin(Duration.ofDays(7))).isTrue();

        TestCertificates.replace(files, ca.issue("broker-0-renewed", 30));
        await().atMost(Duration.ofSeconds(10)).until(() -> !tls.expiresWithin(Duration.ofDays(7)));
        assertThat(tls.subject()).isEqualTo("CN=broker-0-renewed");

        // A key that does not match (a rotation caught half-way): refused, the renewed certificate stays.
        Files.copy(ca.issue("other").privateKey(), files.privateKey(), java.nio.file.StandardCopyOption.REPLACE_EXISTING);
        await().atMost(Duration.ofSeconds(10)).until(() ->
        {
            tls.notAfter();
            return tls.lastReloadFailure() != null;
        });
        assertThat(tls.lastReloadFailure()).contains("does not belong");
        assertThat(tls.subject()).isEqualTo("CN=broker-0-renewed");
    }
}
