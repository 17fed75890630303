package io.sluice.protocol.backup;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Path;
import java.util.List;

/**
 * Where backups go, off the brokers: a flat namespace of objects named by {@code /}-separated keys (a directory
 * tree, or an S3 bucket). Brokers put the files of their partitions, the gateway the cut and the manifest; the
 * restore reads them back. Every implementation is thread-safe.
 */
public interface BackupStore
{
    /** Stores {@code file} under {@code key}, returning its size and SHA-256 as stored. */
    StoredObject put(String key, Path file) throws IOException;

    /** Stores a small object whole: a reader sees the old content, none, or all of the new one. */
    void putBytes(String key, byte[] bytes) throws IOException;

    /** A small object's content, or null when there is none under {@code key}. */
    byte[] getBytes(String key) throws IOException;

    /** Reads an object; the caller closes the stream. */
    InputStream open(String key) throws IOException;

    /** The object's size in bytes, or -1 when there is none under {@code key}. */
    long size(String key) throws IOException;

    /** Every key that starts with {@code prefix}, sorted. */
    List<String> list(String prefix) throws IOException;

    /** Deletes every object whose key starts with {@code prefix}. */
    void deletePrefix(String prefix) throws IOException;

    /** The store, for messages: "filesystem store /var/backups". */
    String describe();

    /** An object as stored: its key, size and lowercase hex SHA-256. */
    record StoredObject(String key, long size, String sha256)
    {
    }

    /** Refuses keys that could leave the store's root or that no store can hold. */
    static String checkKey(final String key)
    {
        if (key == null || key.isEmpty() || key.startsWith("/") || key.contains("\\") || key.contains("//"))
        {
            throw new IllegalArgumentException("not a backup object key: '" + key + "'");
        }
        for (final String part : key.split("/"))
        {
            if (part.equals(".") || part.equals(".."))
            {
                throw new IllegalArgumentException("not a backup object key: '" + key + "'");
            }
        }
        return key;
    }
}
