package io.sluice.protocol.tls;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A certificate authority made at test time with the {@code openssl} command (EC P-256 keys, PKCS#8), which
 * issues certificates for loopback peers (SAN 127.0.0.1 and localhost, server and client use). Nothing is
 * committed: every file lives in the directory the test gives.
 */
public final class TestCertificates
{
    private final Path dir;
    private final String name;
    private final Path caCertificate;
    private final Path caKey;

    private TestCertificates(final Path dir, final String name)
    {
        this.dir = dir;
        this.name = name;
        this.caCertificate = dir.resolve(name + "-ca.pem");
        this.caKey = dir.resolve(name + "-ca.key");
    }

    /** A new CA named {@code name}, its files in {@code dir}. */
    public static TestCertificates authority(final Path dir, final String name) throws IOException
    {
        Files.createDirectories(dir);
        final TestCertificates ca = new TestCertificates(dir, name);
        openssl(dir, "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
            "-keyout", ca.caKey.toString(), "-out", ca.caCertificate.toString(), "-days", "30",
            "-subj", "/CN=" + name + " test CA",
            "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign");
        return ca;
    }

    /** The CA's certificate: the trusted-certificates file of its peers. */
    public Path certificate()
    {
        return caCertificate;
    }

    /** A certificate for {@code peer}, valid for {@code days} (0: expired at once), trusting only this CA. */
    public TlsFiles issue(final String peer, final int days) throws IOException
    {
        final Path key = dir.resolve(name + "-" + peer + ".key");
        final Path csr = dir.resolve(name + "-" + peer + ".csr");
        final Path certificate = dir.resolve(name + "-" + peer + ".pem");
        final Path extensions = dir.resolve(name + "-" + peer + ".ext");
        Files.writeString(extensions, "subjectAltName=IP:127.0.0.1,DNS:localhost\n" +
            "extendedKeyUsage=serverAuth,clientAuth\nbasicConstraints=CA:FALSE\n", StandardCharsets.US_ASCII);
        openssl(dir, "req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
            "-keyout", key.toString(), "-out", csr.toString(), "-subj", "/CN=" + peer);
        openssl(dir, "x509", "-req", "-in", csr.toString(), "-CA", caCertificate.toString(), "-CAkey", caKey.toString(),
            "-CAcreateserial", "-out", certificate.toString(), "-days", Integer.toString(days),
            "-extfile", extensions.toString());
        Files.delete(csr);
        Files.delete(extensions);
        return new TlsFiles(certificate, key, caCertificate);
    }

    /** A certificate valid for 30 days. */
    public TlsFiles issue(final String peer) throws IOException
    {
        return issue(peer, 30);
    }

    /** Copies {@code from}'s three files over {@code to}'s (each replaced atomically, key first). */
    public static void replace(final TlsFiles to, final TlsFiles from) throws IOException
    {
        copy(from.privateKey(), to.privateKey());
        copy(from.certificate(), to.certificate());
        copy(from.trustedCertificates(), to.trustedCertificates());
    }

    private static void copy(final Path from, final Path to) throws IOException
    {
        if (from.equals(to))
        {
            return;
        }
        final Path temporary = to.resolveSibling(to.getFileName() + ".new");
        Files.copy(from, temporary, StandardCopyOption.REPLACE_EXISTING);
        Files.move(temporary, to, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    }

    private static void openssl(final Path dir, final String... arguments) throws IOException
    {
        final List<String> command = new ArrayList<>();
        command.add("openssl");
        command.addAll(List.of(arguments));
        final Process process = new ProcessBuilder(command).directory(dir.toFile()).redirectErrorStream(true).start();
        try
        {
            final byte[] output = process.getInputStream().readAllBytes();
            if (!process.waitFor(30, TimeUnit.SECONDS) || process.exitValue() != 0)
            {
                throw new IOException("openssl failed: " + String.join(" ", command) + "\n" +
                    new String(output, StandardCharsets.UTF_8));
            }
        }
        catch (final InterruptedException e)
        {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while running openssl", e);
        }
        finally
        {
            process.destroy();
        }
    }
}
