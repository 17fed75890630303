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
            case "s3" -> throw new InvalidClusterConfigException(STORE_SETTING,
                "s3 is not available in this build yet; use filesystem");
            default -> throw new InvalidClusterConfigException(STORE_SETTING,
                "must be filesystem or s3, was '" + kind + "'");
        };
    }

    private static String valueOr(final String value, final String otherwise)
    {
        return value == null || value.isBlank() ? otherwise : value.strip();
    }
}
