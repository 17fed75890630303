package io.sluice.protocol.backup;

import java.io.IOException;
import java.io.InputStream;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/** SHA-256, the checksum every backup object is stored and verified with. */
public final class BackupDigests
{
    private BackupDigests()
    {
    }

    public static MessageDigest sha256()
    {
        try
        {
            return MessageDigest.getInstance("SHA-256");
        }
        catch (final NoSuchAlgorithmException e)
        {
            throw new IllegalStateException("this JVM has no SHA-256", e);
        }
    }

    /** Reads {@code in} to its end; returns {size, hex SHA-256} as a {@link Digested}. */
    public static Digested digest(final InputStream in) throws IOException
    {
        final MessageDigest sha256 = sha256();
        final byte[] buffer = new byte[64 * 1024];
        long size = 0;
        int read;
        while ((read = in.read(buffer)) >= 0)
        {
            sha256.update(buffer, 0, read);
            size += read;
        }
        return new Digested(size, HexFormat.of().formatHex(sha256.digest()));
    }

    public record Digested(long size, String sha256)
    {
    }
}
