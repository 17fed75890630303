package io.sluice.protocol.backup;

import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.AwsCredentialsProvider;
import software.amazon.awssdk.auth.credentials.DefaultCredentialsProvider;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.core.checksums.RequestChecksumCalculation;
import software.amazon.awssdk.core.checksums.ResponseChecksumValidation;
import software.amazon.awssdk.core.exception.SdkException;
import software.amazon.awssdk.core.sync.RequestBody;
import software.amazon.awssdk.http.urlconnection.UrlConnectionHttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.S3ClientBuilder;
import software.amazon.awssdk.services.s3.S3Configuration;
import software.amazon.awssdk.services.s3.model.HeadObjectRequest;
import software.amazon.awssdk.services.s3.model.ListObjectsV2Request;
import software.amazon.awssdk.services.s3.model.NoSuchKeyException;
import software.amazon.awssdk.services.s3.model.PutObjectRequest;
import software.amazon.awssdk.services.s3.model.S3Exception;
import software.amazon.awssdk.services.s3.model.S3Object;

import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * {@code sluice.backup.store=s3}: objects in a bucket of any S3-compatible server, under
 * {@code sluice.backup.s3.base-path}. A file's SHA-256 is computed before the put (one extra read of a local file,
 * which the page cache serves) so the manifest names what the store holds; S3 puts are whole, so no reader sees half
 * an object. Every SDK failure is an {@link IOException} naming the bucket and key.
 */
public final class S3BackupStore implements BackupStore, AutoCloseable
{
    private final S3Client s3;
    private final String bucket;
    private final String basePath;
    private final String endpointDescription;

    /** The S3 settings, as {@code sluice.backup.s3.*} names them; null where unset. */
    public record Settings(String bucket, String endpoint, String region, String basePath, String accessKey,
        String secretKey, boolean pathStyleAccess)
    {
    }

    public S3BackupStore(final Settings settings)
    {
        if (settings.bucket() == null || settings.bucket().isBlank())
        {
            throw new IllegalArgumentException("sluice.backup.s3.bucket is required with sluice.backup.store=s3");
        }
        final S3ClientBuilder builder = S3Client.builder()
            .httpClientBuilder(UrlConnectionHttpClient.builder())
            .region(Region.of(settings.region() == null || settings.region().isBlank() ? "us-east-1" : settings.region()))
            // S3-compatible servers (MinIO, Ceph, S3Proxy) vary in how they take the SDK's default trailing
            // checksums over chunked bodies; the store checks SHA-256 itself, so plain signed puts are enough.
            .requestChecksumCalculation(RequestChecksumCalculation.WHEN_REQUIRED)
            .responseChecksumValidation(ResponseChecksumValidation.WHEN_REQUIRED)
            .serviceConfiguration(S3Configuration.builder().chunkedEncodingEnabled(false).build())
            .forcePathStyle(settings.pathStyleAccess())
            .credentialsProvider(credentials(settings));
        if (settings.endpoint() != null && !settings.endpoint().isBlank())
        {
            builder.endpointOverride(URI.create(settings.endpoint()));
        }
        this.s3 = builder.build();
        this.bucket = settings.bucket();
        final String base = settings.basePath() == null ? "" : settings.basePath().strip();
        this.basePath = base.isEmpty() ? "" : (base.endsWith("/") ? base : base + "/");
        this.endpointDescription = "s3 store " + bucket + "/" + basePath +
            (settings.endpoint() == null ? "" : " at " + settings.endpoint());
    }

    private static AwsCredentialsProvider credentials(final Settings settings)
    {
        if (settings.accessKey() != null && !settings.accessKey().isBlank())
        {
            return StaticCredentialsProvider.create(AwsBasicCredentials.create(settings.accessKey(),
                settings.secretKey() == null ? "" : settings.secretKey()));
        }
        return DefaultCredentialsProvider.builder().build();
    }

    @Override
    public StoredObject put(final String key, final Path file) throws IOException
    {
        final BackupDigests.Digested digested;
        try (InputStream in = Files.newInputStream(file))
        {
            digested = BackupDigests.digest(in);
        }
        try
        {
            s3.putObject(PutObjectRequest.builder().bucket(bucket).key(full(key)).build(), RequestBody.fromFile(file));
        }
        catch (final SdkException e)
        {
            throw failed("put", key, e);
        }
        return new StoredObject(key, digested.size(), digested.sha256());
    }

    @Override
    public void putBytes(final String key, final byte[] bytes) throws IOException
    {
        try
        {
            s3.putObject(PutObjectRequest.builder().bucket(bucket).key(full(key)).build(), RequestBody.fromBytes(bytes));
        }
        catch (final SdkException e)
        {
            throw failed("put", key, e);
        }
    }

    @Override
    public byte[] getBytes(final String key) throws IOException
    {
        try
        {
            return s3.getObjectAsBytes((b) -> b.bucket(bucket).key(full(key))).asByteArray();
        }
        catch (final NoSuchKeyException e)
        {
            return null;
        }
        catch (final SdkException e)
        {
            throw failed("get", key, e);
        }
    }

    @Override
    public InputStream open(final String key) throws IOException
    {
        try
        {
            return s3.getObject((b) -> b.bucket(bucket).key(full(key)));
        }
        catch (final SdkException e)
        {
            throw failed("get", key, e);
        }
    }

    @Override
    public long size(final String key) throws IOException
    {
        try
        {
            return s3.headObject(HeadObjectRequest.builder().bucket(bucket).key(full(key)).build()).contentLength();
        }
        catch (final NoSuchKeyException e)
        {
            return -1;
        }
        catch (final S3Exception e)
        {
            if (e.statusCode() == 404)
            {
                return -1;
            }
            throw failed("head", key, e);
        }
        catch (final SdkException e)
        {
            throw failed("head", key, e);
        }
    }

    @Override
    public List<String> list(final String prefix) throws IOException
    {
        final List<String> keys = new ArrayList<>();
        try
        {
            for (final S3Object object : s3.listObjectsV2Paginator(ListObjectsV2Request.builder().bucket(bucket)
                .prefix(basePath + prefix).build()).contents())
            {
                keys.add(object.key().substring(basePath.length()));
            }
        }
        catch (final SdkException e)
        {
            throw failed("list", prefix, e);
        }
        keys.sort(null);
        return keys;
    }

    @Override
    public void deletePrefix(final String prefix) throws IOException
    {
        // One DeleteObject each: a backup has a few objects a partition, and DeleteObjects needs a checksum header
        // that not every S3-compatible server implements.
        for (final String key : list(prefix))
        {
            try
            {
                s3.deleteObject((b) -> b.bucket(bucket).key(full(key)));
            }
            catch (final SdkException e)
            {
                throw failed("delete", key, e);
            }
        }
    }

    @Override
    public String describe()
    {
        return endpointDescription;
    }

    @Override
    public void close()
    {
        s3.close();
    }

    private String full(final String key)
    {
        return basePath + BackupStore.checkKey(key);
    }

    private IOException failed(final String what, final String key, final SdkException e)
    {
        return new IOException(what + " of " + bucket + "/" + basePath + key + " failed: " + e.getMessage(), e);
    }
}
