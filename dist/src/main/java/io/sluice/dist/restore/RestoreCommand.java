package io.sluice.dist.restore;

import io.sluice.broker.exporter.ExporterConfig;
import io.sluice.dist.SluiceProperties;
import io.sluice.protocol.backup.BackupRestore;
import io.sluice.protocol.backup.BackupStore;
import io.sluice.protocol.backup.BackupStores;
import io.sluice.protocol.cluster.PartitionDistribution;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.source.ConfigurationPropertySources;
import org.springframework.core.ResolvableType;
import org.springframework.core.env.SimpleCommandLinePropertySource;
import org.springframework.core.env.StandardEnvironment;
import picocli.CommandLine;
import picocli.CommandLine.ArgGroup;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Unmatched;

import java.io.PrintStream;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;

/**
 * {@code java -jar sluice.jar restore --backup-id N (--node-id K | --all-brokers) [--sinks] [--prop=value ...]}
 * (CONTRACT §8): writes brokers' data directories from a backup, with the same cluster, backup and exporter settings
 * as the brokers ({@code --sluice.cluster.*}, {@code --sluice.data-dir}, {@code --sluice.backup.*},
 * {@code --sluice.exporters.*}, or their environment variables); with {@code --sinks} it then restores each sink
 * snapshot of the backup into its exporter's sink ({@link SinkRestore}), after checking every one first.
 * Refuses with one line, exit code 1 and nothing written a backup that does not verify, another cluster layout, or a
 * data directory that is not empty ({@link BackupRestore}). No Spring context: it only reads the settings.
 */
@Command(name = "restore", mixinStandardHelpOptions = true,
    description = "Write brokers' data directories from a backup (then start the brokers).")
public final class RestoreCommand implements Callable<Integer>
{
    public static final int EXIT_OK = 0;
    public static final int EXIT_REFUSED = 1;
    public static final int EXIT_USAGE = 2;

    @Option(names = "--backup-id", required = true, description = "the backup to restore")
    long backupId;

    @ArgGroup(multiplicity = "1")
    Target target;

    @Option(names = "--sinks", description = "also restore each sink snapshot into its index")
    boolean sinks;

    @Unmatched
    List<String> settings = new ArrayList<>();

    private PrintStream out;
    private PrintStream err;

    static final class Target
    {
        @Option(names = "--node-id", description = "restore this broker's data directory")
        Integer nodeId;

        @Option(names = "--all-brokers", description = "restore every broker's data directory (one machine)")
        boolean allBrokers;
    }

    /** Runs the restore; never calls System.exit. */
    public static int run(final String[] args, final PrintStream out, final PrintStream err)
    {
        final RestoreCommand command = new RestoreCommand();
        command.out = out;
        command.err = err;
        final CommandLine cli = new CommandLine(command);
        cli.setOut(new java.io.PrintWriter(out, true));
        cli.setErr(new java.io.PrintWriter(err, true));
        cli.setParameterExceptionHandler((ex, a) ->
        {
            err.println("restore: " + ex.getMessage());
            err.println("usage: java -jar sluice.jar restore --backup-id N (--node-id K | --all-brokers) [--prop=value ...]");
            return EXIT_USAGE;
        });
        cli.setExecutionExceptionHandler((ex, c, p) ->
        {
            err.println("restore: " + ex.getMessage());
            return EXIT_REFUSED;
        });
        return cli.execute(args);
    }

    @Override
    public Integer call() throws Exception
    {
        for (final String setting : settings)
        {
            if (!setting.startsWith("--") || !setting.contains("="))
            {
                err.println("restore: '" + setting + "' is neither a restore option nor a --name=value setting");
                return EXIT_USAGE;
            }
        }
        if (backupId < 1)
        {
            err.println("restore: --backup-id must be a positive integer, was " + backupId);
            return EXIT_USAGE;
        }
        final StandardEnvironment environment = new StandardEnvironment();
        environment.getPropertySources().addFirst(new SimpleCommandLinePropertySource(settings.toArray(String[]::new)));
        ConfigurationPropertySources.attach(environment);
        final Binder binder = Binder.get(environment);
        try
        {
            final PartitionDistribution distribution = PartitionDistribution.of(
                binder.bind("sluice.cluster.brokers", String.class)
                    .orElse("127.0.0.1:26501,127.0.0.1:26511,127.0.0.1:26521"),
                binder.bind("sluice.cluster.partitions", Integer.class).orElse(6),
                binder.bind("sluice.cluster.replication-factor", Integer.class).orElse(3));
            final Path dataDir = Path.of(binder.bind("sluice.data-dir", String.class).orElse("./sluice-data"));
            final BackupStore store = BackupStores.fromSettings((name) -> binder.bind(name, String.class).orElse(null));
            final List<Integer> brokers = new ArrayList<>();
            if (target.allBrokers)
            {
                for (int b = 0; b < distribution.brokerCount(); b++)
                {
                    brokers.add(b);
                }
            }
            else
            {
                brokers.add(target.nodeId);
            }
            // The sinks are checked first: a snapshot the sink cannot restore refuses the whole restore, nothing written.
            final SinkRestore sinkRestore = sinks ? SinkRestore.prepare(store, backupId, exporters(binder, dataDir)) : null;
            try
            {
                final BackupRestore.Restored restored = BackupRestore.restore(store, backupId, distribution, dataDir,
                    brokers);
                out.println("restore: backup " + backupId + " written for broker(s) " + brokers + " under " +
                    dataDir.toAbsolutePath().normalize() + " (" + restored.bytes() + " bytes from the " +
                    store.describe() + ")");
                if (sinkRestore != null)
                {
                    for (final String restoredSink : sinkRestore.restore())
                    {
                        out.println("restore: " + restoredSink);
                    }
                }
            }
            finally
            {
                if (sinkRestore != null)
                {
                    sinkRestore.close();
                }
            }
            out.println("restore: done; start the brokers");
            return EXIT_OK;
        }
        catch (final BackupRestore.RestoreRefusedException e)
        {
            err.println("restore: refused, nothing written: " + e.getMessage());
            return EXIT_REFUSED;
        }
        catch (final IllegalArgumentException e)
        {
            err.println("restore: refused, nothing written: " + e.getMessage());
            return EXIT_REFUSED;
        }
        catch (final SinkRestore.SinkRestoreException e)
        {
            err.println("restore: " + e.getMessage());
            return EXIT_REFUSED;
        }
    }

    /** The exporters as the brokers read them ({@code sluice.exporters.*}), for their sinks' snapshots. */
    private static Map<String, ExporterConfig> exporters(final Binder binder, final Path dataDir)
    {
        final SluiceProperties sluice = new SluiceProperties();
        sluice.setDataDir(dataDir);
        final ResolvableType settings = ResolvableType.forClassWithGenerics(Map.class, String.class, String.class);
        binder.bind("sluice.exporters", Bindable.<Map<String, Map<String, String>>>of(
                ResolvableType.forClassWithGenerics(Map.class, ResolvableType.forClass(String.class), settings)))
            .ifBound(sluice.getExporters()::putAll);
        return sluice.exporterConfigs();
    }
}
