package io.sluice.protocol.backup;

import io.sluice.protocol.cluster.InvalidClusterConfigException;

import java.nio.file.Path;
import java.util.function.Function;

/** Opens the store {@code sluice.backup.store} names, from the settings as any process reads them. */
public final class BackupStores
{
    public static final String STORE_SETTING = "sluice.backup.store";
    public static final String FILESYSTEM_PATH_SETTING = "sluice.backup.filesystem.path";
    public static final String DEFAULT_FILESYSTEM_PATH = "./sluice-backups";

    private BackupStores()
    {
    }

    /** @param settings a setting's value by its name, null when unset. */
    public static BackupStore fromSettings(final Function<String, String> settings)
    {
        final String kind = valueOr(settings.apply(STORE_SETTING), "filesystem");
        return switch (kind)
        {
            case "filesystem" -> new FilesystemBackupStore(
                Path.of(valueOr(settings.apply(FILESYSTEM_PATH_SETTING), DEFAULT_FILESYSTEM_PATH)));
            case "s3" ->
            {
                final String bucket = settings.apply("sluice.backup.s3.bucket");
                if (bucket == null || bucket.isBlank())
                {
                    throw new InvalidClusterConfigException("sluice.backup.s3.bucket",
                        "required with sluice.backup.store=s3");
                }
                yield new S3BackupStore(new S3BackupStore.Settings(bucket, settings.apply("sluice.backup.s3.endpoint"),
                    settings.apply("sluice.backup.s3.region"), settings.apply("sluice.backup.s3.base-path"),
                    settings.apply("sluice.backup.s3.access-key"), settings.apply("sluice.backup.s3.secret-key"),
                    Boolean.parseBoolean(valueOr(settings.apply("sluice.backup.s3.path-style-access"), "false"))));
            }
            default -> throw new InvalidClusterConfigException(STORE_SETTING,
                "must be filesystem or s3, was '" + kind + "'");
        };
    }

    private static String valueOr(final String value, final String otherwise)
    {
        return value == null || value.isBlank() ? otherwise : value.strip();
    }
}
