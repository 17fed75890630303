package io.sluice.gateway.broker;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;

/**
 * The idempotency id of one append batch (issue 14): a 128-bit hash of (scope, idempotency key, sub-batch index),
 * the digest of the whole request body the batch came from, and how long the partition remembers it. The
 * partition answers a batch whose id it remembers with the positions it first gave, or CONFLICT when the digest
 * differs, so a retry (the client's, or the gateway's own after a timed-out attempt) never appends twice.
 *
 * @param scope {@link #CLIENT} for a client's {@code Idempotency-Key}, {@link #GATEWAY} for the gateway's own id.
 */
public record AppendId(int scope, long high, long low, long bodyDigest, long windowMs)
{
    public static final int CLIENT = 1;
    public static final int GATEWAY = 2;

    /** The id of sub-batch {@code index} of a request sent under {@code key}. */
    public static AppendId of(final int scope, final String key, final int index, final long bodyDigest, final long windowMs)
    {
        final MessageDigest sha = sha256();
        sha.update((byte)scope);
        sha.update(key.getBytes(StandardCharsets.UTF_8));
        sha.update(ByteBuffer.allocate(Integer.BYTES).putInt(index).array());
        final ByteBuffer hash = ByteBuffer.wrap(sha.digest());
        return new AppendId(scope, hash.getLong(), hash.getLong(), bodyDigest, windowMs);
    }

    /** The first 64 bits of the body's SHA-256. */
    public static long digest(final byte[] body)
    {
        return ByteBuffer.wrap(sha256().digest(body)).getLong();
    }

    private static MessageDigest sha256()
    {
        try
        {
            return MessageDigest.getInstance("SHA-256");
        }
        catch (final NoSuchAlgorithmException e)
        {
            throw new IllegalStateException("every Java runtime has SHA-256", e);
        }
    }
}
