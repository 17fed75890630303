package io.sluice.protocol.tls;

import io.sluice.protocol.cluster.InvalidClusterConfigException;

import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.TrustManager;
import javax.net.ssl.TrustManagerFactory;
import javax.net.ssl.X509ExtendedKeyManager;
import javax.net.ssl.X509ExtendedTrustManager;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.SecureRandom;
import java.security.Signature;
import java.security.cert.Certificate;
import java.security.cert.CertificateException;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.security.spec.PKCS8EncodedKeySpec;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Collection;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * One reading of the three PEM files, checked: the chain parses and its first certificate is valid now, the
 * private key (PKCS#8) belongs to it, and the trusted bundle holds at least one certificate. Every problem is an
 * {@link InvalidClusterConfigException} naming the setting whose file is wrong. Immutable.
 */
final class TlsMaterial
{
    private static final Pattern PRIVATE_KEY = Pattern.compile(
        "-----BEGIN PRIVATE KEY-----([A-Za-z0-9+/=\\s]+)-----END PRIVATE KEY-----");

    final X509Certificate[] chain;
    final PrivateKey privateKey;
    final X509ExtendedKeyManager keyManager;
    final X509ExtendedTrustManager trustManager;
    final List<X509Certificate> trusted;

    private TlsMaterial(final X509Certificate[] chain, final PrivateKey privateKey, final List<X509Certificate> trusted,
        final X509ExtendedKeyManager keyManager, final X509ExtendedTrustManager trustManager)
    {
        this.chain = chain;
        this.privateKey = privateKey;
        this.trusted = trusted;
        this.keyManager = keyManager;
        this.trustManager = trustManager;
    }

    /** Reads and checks the files; {@code now} is when the certificate must be valid. */
    static TlsMaterial read(final TlsFiles files, final Instant now)
    {
        final List<X509Certificate> chain = certificates(files.certificate(), TlsFiles.CERTIFICATE_SETTING);
        final X509Certificate leaf = chain.get(0);
        if (now.isAfter(leaf.getNotAfter().toInstant()))
        {
            throw new InvalidClusterConfigException(TlsFiles.CERTIFICATE_SETTING, "the certificate in " +
                files.certificate() + " expired at " + leaf.getNotAfter().toInstant() + " (" +
                leaf.getSubjectX500Principal().getName() + ")");
        }
        if (now.isBefore(leaf.getNotBefore().toInstant()))
        {
            throw new InvalidClusterConfigException(TlsFiles.CERTIFICATE_SETTING, "the certificate in " +
                files.certificate() + " is not valid before " + leaf.getNotBefore().toInstant());
        }
        final PrivateKey key = privateKey(files.privateKey());
        checkKeyMatches(key, leaf, files);
        final List<X509Certificate> trusted = certificates(files.trustedCertificates(),
            TlsFiles.TRUSTED_CERTIFICATES_SETTING);
        try
        {
            final KeyStore keys = KeyStore.getInstance("PKCS12");
            keys.load(null, null);
            final X509Certificate[] chainArray = chain.toArray(new X509Certificate[0]);
            keys.setKeyEntry("sluice", key, new char[0], chainArray);
            final KeyManagerFactory kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
            kmf.init(keys, new char[0]);

            final KeyStore trust = KeyStore.getInstance("PKCS12");
            trust.load(null, null);
            for (int i = 0; i < trusted.size(); i++)
            {
                trust.setCertificateEntry("ca-" + i, trusted.get(i));
            }
            final TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
            tmf.init(trust);
            return new TlsMaterial(chainArray, key, List.copyOf(trusted),
                (X509ExtendedKeyManager)kmf.getKeyManagers()[0], x509(tmf.getTrustManagers()));
        }
        catch (final GeneralSecurityException | IOException e)
        {
            throw new InvalidClusterConfigException(TlsFiles.CERTIFICATE_SETTING,
                "cannot build a key store from " + files.certificate() + " and " + files.privateKey() + ": " + e.getMessage());
        }
    }

    X509Certificate leaf()
    {
        return chain[0];
    }

    private static X509ExtendedTrustManager x509(final TrustManager[] managers)
    {
        for (final TrustManager manager : managers)
        {
            if (manager instanceof X509ExtendedTrustManager x509)
            {
                return x509;
            }
        }
        throw new IllegalStateException("no X.509 trust manager in this JVM");
    }

    private static List<X509Certificate> certificates(final Path file, final String setting)
    {
        final byte[] pem = readFile(file, setting);
        final Collection<? extends Certificate> parsed;
        try
        {
            parsed = CertificateFactory.getInstance("X.509").generateCertificates(new ByteArrayInputStream(pem));
        }
        catch (final CertificateException e)
        {
            throw new InvalidClusterConfigException(setting, file + " is not a PEM certificate file: " + e.getMessage());
        }
        final List<X509Certificate> certificates = new ArrayList<>();
        for (final Certificate certificate : parsed)
        {
            certificates.add((X509Certificate)certificate);
        }
        if (certificates.isEmpty())
        {
            throw new InvalidClusterConfigException(setting, file + " holds no PEM certificate");
        }
        return certificates;
    }

    private static PrivateKey privateKey(final Path file)
    {
        final String pem = new String(readFile(file, TlsFiles.PRIVATE_KEY_SETTING), StandardCharsets.US_ASCII);
        final Matcher matcher = PRIVATE_KEY.matcher(pem);
        if (!matcher.find())
        {
            throw new InvalidClusterConfigException(TlsFiles.PRIVATE_KEY_SETTING, file + " holds no unencrypted PKCS#8 " +
                "private key ('-----BEGIN PRIVATE KEY-----'; convert with 'openssl pkcs8 -topk8 -nocrypt')");
        }
        final byte[] der;
        try
        {
            der = Base64.getMimeDecoder().decode(matcher.group(1));
        }
        catch (final IllegalArgumentException e)
        {
            throw new InvalidClusterConfigException(TlsFiles.PRIVATE_KEY_SETTING, file + ": bad base64: " + e.getMessage());
        }
        for (final String algorithm : new String[]{"RSA", "EC", "Ed25519", "Ed448"})
        {
            try
            {
                return KeyFactory.getInstance(algorithm).generatePrivate(new PKCS8EncodedKeySpec(der));
            }
            catch (final GeneralSecurityException e)
            {
                // try the next algorithm
            }
        }
        throw new InvalidClusterConfigException(TlsFiles.PRIVATE_KEY_SETTING, file +
            " holds a private key of an unsupported algorithm (RSA, EC, Ed25519 or Ed448)");
    }

    /** Signs a random probe with the key and verifies it with the certificate's public key. */
    private static void checkKeyMatches(final PrivateKey key, final X509Certificate certificate, final TlsFiles files)
    {
        final String algorithm = switch (key.getAlgorithm())
        {
            case "RSA" -> "SHA256withRSA";
            case "EC" -> "SHA256withECDSA";
            default -> key.getAlgorithm();
        };
        boolean matches;
        try
        {
            final byte[] probe = new byte[32];
            new SecureRandom().nextBytes(probe);
            final Signature signer = Signature.getInstance(algorithm);
            signer.initSign(key);
            signer.update(probe);
            final byte[] signature = signer.sign();
            final Signature verifier = Signature.getInstance(algorithm);
            verifier.initVerify(certificate.getPublicKey());
            verifier.update(probe);
            matches = verifier.verify(signature);
        }
        catch (final GeneralSecurityException e)
        {
            matches = false;
        }
        if (!matches)
        {
            throw new InvalidClusterConfigException(TlsFiles.PRIVATE_KEY_SETTING, "the private key in " +
                files.privateKey() + " does not belong to the certificate in " + files.certificate() + " (" +
                certificate.getSubjectX500Principal().getName() + ")");
        }
    }

    private static byte[] readFile(final Path file, final String setting)
    {
        if (file == null)
        {
            throw new InvalidClusterConfigException(setting, "required when sluice.cluster.tls.enabled=true");
        }
        try
        {
            return Files.readAllBytes(file);
        }
        catch (final NoSuchFileException e)
        {
            throw new InvalidClusterConfigException(setting, "file " + file.toAbsolutePath() + " does not exist");
        }
        catch (final IOException e)
        {
            throw new InvalidClusterConfigException(setting, "cannot read " + file.toAbsolutePath() + ": " + e);
        }
    }
}
