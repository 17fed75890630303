package io.sluice.protocol.tls;

import java.nio.file.Path;

/**
 * The PEM files of {@code sluice.cluster.tls.*}: this process's certificate chain, its private key (PKCS#8), and
 * the bundle of CAs whose certificates a peer must present.
 */
public record TlsFiles(Path certificate, Path privateKey, Path trustedCertificates)
{
    public static final String ENABLED_SETTING = "sluice.cluster.tls.enabled";
    public static final String CERTIFICATE_SETTING = "sluice.cluster.tls.certificate";
    public static final String PRIVATE_KEY_SETTING = "sluice.cluster.tls.private-key";
    public static final String TRUSTED_CERTIFICATES_SETTING = "sluice.cluster.tls.trusted-certificates";
}
