package io.sluice.qa.backup;

import org.gaul.s3proxy.AuthenticationType;
import org.gaul.s3proxy.S3Proxy;
import org.jclouds.ContextBuilder;
import org.jclouds.blobstore.BlobStore;
import org.jclouds.blobstore.BlobStoreContext;

import java.net.URI;
import java.util.concurrent.TimeUnit;

/**
 * A real S3-compatible server on loopback: S3Proxy over an in-memory blob store, with signed requests and path-style
 * access. {@link #stop} stops the server (every connection refused) and {@link #start} brings it back on the same port
 * with the same objects, so a test can take the store away mid-upload and give it back.
 */
final class S3Server implements AutoCloseable
{
    static final String IDENTITY = "sluice";
    static final String CREDENTIAL = "sluice-secret";

    private final BlobStoreContext blobs = ContextBuilder.newBuilder("transient").build(BlobStoreContext.class);
    private final int port;
    private S3Proxy proxy;

    S3Server(final int port)
    {
        this.port = port;
    }

    int port()
    {
        return port;
    }

    BlobStore blobs()
    {
        return blobs.getBlobStore();
    }

    synchronized void start() throws Exception
    {
        proxy = S3Proxy.builder()
            .blobStore(blobs.getBlobStore())
            .endpoint(URI.create("http://127.0.0.1:" + port))
            .awsAuthentication(AuthenticationType.AWS_V2_OR_V4, IDENTITY, CREDENTIAL)
            .build();
        proxy.start();
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (!"STARTED".equals(proxy.getState()))
        {
            if (System.nanoTime() > deadline)
            {
                throw new IllegalStateException("S3Proxy did not start on port " + port + ": " + proxy.getState());
            }
            Thread.sleep(20);
        }
    }

    synchronized void stop() throws Exception
    {
        if (proxy != null)
        {
            proxy.stop();
            proxy = null;
        }
    }

    @Override
    public void close() throws Exception
    {
        stop();
        blobs.close();
    }
}
