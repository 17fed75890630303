package io.sluice.protocol.backup;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.security.DigestInputStream;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.UUID;
import java.util.stream.Stream;

/**
 * {@code sluice.backup.store=filesystem}: each object is a file under the root directory at its key's path. Every
 * object is written to a temporary file beside it and moved into place, so a reader never sees half an object.
 */
public final class FilesystemBackupStore implements BackupStore
{
    private static final String TEMP_SUFFIX = ".part";

    private final Path root;

    public FilesystemBackupStore(final Path root)
    {
        this.root = root.toAbsolutePath().normalize();
    }

    public Path root()
    {
        return root;
    }

    @Override
    public StoredObject put(final String key, final Path file) throws IOException
    {
        final Path target = pathOf(key);
        final Path temp = temp(target);
        final MessageDigest sha256 = BackupDigests.sha256();
        final long size;
        try (InputStream in = new DigestInputStream(Files.newInputStream(file), sha256);
             OutputStream out = Files.newOutputStream(temp))
        {
            size = in.transferTo(out);
        }
        catch (final IOException e)
        {
            Files.deleteIfExists(temp);
            throw e;
        }
        moveIntoPlace(temp, target);
        return new StoredObject(key, size, HexFormat.of().formatHex(sha256.digest()));
    }

    @Override
    public void putBytes(final String key, final byte[] bytes) throws IOException
    {
        final Path target = pathOf(key);
        final Path temp = temp(target);
        Files.write(temp, bytes);
        moveIntoPlace(temp, target);
    }

    @Override
    public byte[] getBytes(final String key) throws IOException
    {
        try
        {
            return Files.readAllBytes(pathOf(key));
        }
        catch (final NoSuchFileException e)
        {
            return null;
        }
    }

    @Override
    public InputStream open(final String key) throws IOException
    {
        return Files.newInputStream(pathOf(key));
    }

    @Override
    public long size(final String key) throws IOException
    {
        final Path path = pathOf(key);
        return Files.isRegularFile(path) ? Files.size(path) : -1;
    }

    @Override
    public List<String> list(final String prefix) throws IOException
    {
        if (!Files.isDirectory(root))
        {
            return List.of();
        }
        final List<String> keys = new ArrayList<>();
        try (Stream<Path> files = Files.walk(root))
        {
            files.filter(Files::isRegularFile)
                .map((p) -> root.relativize(p).toString().replace('\\', '/'))
                .filter((k) -> k.startsWith(prefix) && !k.endsWith(TEMP_SUFFIX))
                .forEach(keys::add);
        }
        keys.sort(null);
        return keys;
    }

    @Override
    public void deletePrefix(final String prefix) throws IOException
    {
        for (final String key : list(prefix))
        {
            Files.deleteIfExists(pathOf(key));
        }
        // A prefix ending in '/' names a directory: remove the emptied tree too.
        if (prefix.endsWith("/") && prefix.length() > 1)
        {
            final Path dir = pathOf(prefix.substring(0, prefix.length() - 1));
            if (Files.isDirectory(dir))
            {
                Files.walkFileTree(dir, new SimpleFileVisitor<>()
                {
                    @Override
                    public FileVisitResult visitFile(final Path file, final BasicFileAttributes attrs) throws IOException
                    {
                        Files.delete(file);
                        return FileVisitResult.CONTINUE;
                    }

                    @Override
                    public FileVisitResult postVisitDirectory(final Path d, final IOException e) throws IOException
                    {
                        Files.delete(d);
                        return FileVisitResult.CONTINUE;
                    }
                });
            }
        }
    }

    @Override
    public String describe()
    {
        return "filesystem store " + root;
    }

    private Path pathOf(final String key)
    {
        return root.resolve(BackupStore.checkKey(key));
    }

    private static Path temp(final Path target) throws IOException
    {
        Files.createDirectories(target.getParent());
        return target.resolveSibling(target.getFileName() + "." + UUID.randomUUID() + TEMP_SUFFIX);
    }

    private static void moveIntoPlace(final Path temp, final Path target) throws IOException
    {
        try
        {
            Files.move(temp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        }
        catch (final AtomicMoveNotSupportedException e)
        {
            Files.move(temp, target, StandardCopyOption.REPLACE_EXISTING);
        }
    }
}
