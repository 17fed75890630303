package io.sluice.protocol.backup;

import org.gaul.s3proxy.AuthenticationType;
import org.gaul.s3proxy.S3Proxy;
import org.jclouds.ContextBuilder;
import org.jclouds.blobstore.BlobStoreContext;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.IOException;
import java.net.URI;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The S3 store against a real S3-compatible server: S3Proxy on loopback over an in-memory blob store, with signed
 * requests and path-style access, as an operator points Sluice at MinIO or Ceph.
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class S3BackupStoreIT extends BackupStoreContract
{
    private static S3Proxy proxy;
    private static BlobStoreContext blobs;
    private static int bucketCount;
    private S3BackupStore store;

    @BeforeAll
    static void startS3() throws Exception
    {
        blobs = ContextBuilder.newBuilder("transient").build(BlobStoreContext.class);
        proxy = S3Proxy.builder()
            .blobStore(blobs.getBlobStore())
            .endpoint(URI.create("http://127.0.0.1:0"))
            .awsAuthentication(AuthenticationType.AWS_V2_OR_V4, "sluice", "sluice-secret")
            .build();
        proxy.start();
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (!proxy.getState().equals("STARTED"))
        {
            if (System.nanoTime() > deadline)
            {
                throw new IllegalStateException("S3Proxy did not start: " + proxy.getState());
            }
            Thread.sleep(20);
        }
    }

    @AfterAll
    static void stopS3() throws Exception
    {
        proxy.stop();
        blobs.close();
    }

    @BeforeEach
    void newBucket()
    {
        final String bucket = "backups-" + (++bucketCount);
        blobs.getBlobStore().createContainerInLocation(null, bucket);
        store = new S3BackupStore(settings(bucket, proxy.getPort()));
    }

    private static S3BackupStore.Settings settings(final String bucket, final int port)
    {
        return new S3BackupStore.Settings(bucket, "http://127.0.0.1:" + port, "us-east-1", "sluice/prod",
            "sluice", "sluice-secret", true);
    }

    @Override
    BackupStore store()
    {
        return store;
    }

    @Test
    void aWrongSecretIsAnIoErrorNamingTheObject()
    {
        final S3BackupStore wrong = new S3BackupStore(new S3BackupStore.Settings("backups-" + bucketCount,
            "http://127.0.0.1:" + proxy.getPort(), "us-east-1", "", "sluice", "not-the-secret", true));
        assertThatThrownBy(() -> wrong.putBytes("backups/1/cut", new byte[] {1}))
            .isInstanceOf(IOException.class).hasMessageContaining("backups/1/cut");
    }
}
