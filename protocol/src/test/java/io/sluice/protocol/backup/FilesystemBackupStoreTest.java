package io.sluice.protocol.backup;

import org.junit.jupiter.api.BeforeEach;

class FilesystemBackupStoreTest extends BackupStoreContract
{
    private BackupStore store;

    @BeforeEach
    void open()
    {
        store = new FilesystemBackupStore(temp.resolve("store"));
    }

    @Override
    BackupStore store()
    {
        return store;
    }
}
