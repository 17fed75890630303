package io.sluice.dist;

import io.sluice.cli.AdminCli;
import io.sluice.gateway.GatewayApplication;
import io.sluice.protocol.concurrent.CommonPool;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.core.env.SimpleCommandLinePropertySource;
import org.springframework.core.env.StandardEnvironment;

import java.io.PrintStream;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Entry point of sluice.jar; dispatches on the mode word:
 * <ul>
 *   <li>none, or {@code standalone}: every broker of the cluster and the gateway in this JVM;</li>
 *   <li>{@code broker}: one broker ({@code sluice.broker.node-id} required);</li>
 *   <li>{@code gateway}: the gateway;</li>
 *   <li>{@code admin}: the operator CLI, without any Spring context so it starts fast.</li>
 * </ul>
 * Settings are Spring properties ({@code --name=value} or environment variables); an unknown {@code sluice.*} one
 * is refused ({@link KnownSettings}). A startup failure ends the process with one line naming the setting and a
 * non-zero exit code.
 */
public final class SluiceMain
{
    public static final int EXIT_OK = 0;
    public static final int EXIT_STARTUP_FAILED = 1;
    public static final int EXIT_USAGE = 2;

    static final String USAGE = "usage: java -jar sluice.jar [standalone|broker|gateway|admin|restore] [--prop=value ...]";

    /** The standalone's client API address unless one is set. */
    static final String STANDALONE_SERVER_ADDRESS = "server.address=127.0.0.1";

    /** What {@code --help}, {@code -h} and {@code help} print: the modes and where the settings are described. */
    static final String HELP = USAGE + """

        modes:
          standalone   (the default) every broker of sluice.cluster.brokers and the gateway in this JVM,
                       both HTTP ports on 127.0.0.1 unless server.address / management.server.address are set
          broker       one broker: --sluice.broker.node-id=N (its index in sluice.cluster.brokers)
          gateway      the gateway: client API on server.port (8080), management API on management.server.port (9600)
          admin        the operator CLI against a gateway's management API (java -jar sluice.jar admin --help)
          restore      write brokers' data directories from a backup (java -jar sluice.jar restore --help)
          help         this text (also --help, -h)
        settings are Spring properties, --name=value or the environment variable (SLUICE_DATADIR ...):
          sluice.cluster.brokers, sluice.cluster.partitions, sluice.cluster.replication-factor,
          sluice.data-dir (./sluice-data), sluice.exporters.<id>.type, sluice.management.token, ...
        see README.md and docs/operations.md
        """;

    private SluiceMain()
    {
    }

    public static void main(final String[] args)
    {
        // First, before anything loads CompletableFuture: on a 2-CPU host it would start a thread per async task.
        CommonPool.raiseParallelismIfSingle();
        if (args.length > 0 && "admin".equals(args[0]))
        {
            System.exit(AdminCli.run(Arrays.copyOfRange(args, 1, args.length)));
        }
        if (args.length > 0 && "restore".equals(args[0]))
        {
            System.exit(io.sluice.dist.restore.RestoreCommand.run(Arrays.copyOfRange(args, 1, args.length),
                System.out, System.err));
        }
        final Launch launch = launch(args, System.out, System.err);
        if (launch.exitCode() != EXIT_OK)
        {
            System.exit(launch.exitCode());
        }
        // Running: Tomcat's threads (gateway, standalone) or Spring's keep-alive thread (broker) hold the JVM
        // until SIGTERM, when Spring's shutdown hook closes the context and with it every broker.
    }

    /** A started process: the context to close, or the exit code of a failed start (context null). */
    public record Launch(int exitCode, ConfigurableApplicationContext context)
    {
    }

    /** Starts the mode named by {@code args[0]}; never calls System.exit. Help goes to stderr. */
    public static Launch launch(final String[] args, final PrintStream err)
    {
        return launch(args, err, err);
    }

    /**
     * Starts the mode named by {@code args[0]}; never calls System.exit. {@code --help}, {@code -h} or
     * {@code help} anywhere before the admin CLI prints {@link #HELP} to {@code out} and starts nothing.
     */
    public static Launch launch(final String[] args, final PrintStream out, final PrintStream err)
    {
        if (asksForHelp(args))
        {
            out.print(HELP);
            out.flush();
            return new Launch(EXIT_OK, null);
        }
        final String mode = args.length == 0 || args[0].startsWith("--") ? "standalone" : args[0];
        final String[] rest = args.length == 0 || args[0].startsWith("--") ? args : Arrays.copyOfRange(args, 1, args.length);
        final SpringApplicationBuilder builder;
        switch (mode)
        {
            case "standalone":
                // A one-machine setup: the client API on loopback unless server.address is set (the management
                // API is on loopback in every mode unless management.server.address is set: ManagementBindingPolicy).
                // Default properties rank below every command-line option, environment variable and file.
                builder = new SpringApplicationBuilder(GatewayApplication.class, StandaloneMode.class)
                    .properties(STANDALONE_SERVER_ADDRESS);
                break;
            case "gateway":
                builder = new SpringApplicationBuilder(GatewayApplication.class);
                break;
            case "broker":
                builder = new SpringApplicationBuilder(BrokerMode.class)
                    .web(WebApplicationType.NONE)
                    .properties("spring.main.keep-alive=true", "spring.application.name=sluice-broker");
                break;
            case "admin":
            case "restore":
                err.println("sluice: " + mode + " runs only from main (it exits the JVM)");
                return new Launch(EXIT_USAGE, null);
            default:
                err.println("sluice: unknown mode '" + mode + "'");
                err.println(USAGE);
                return new Launch(EXIT_USAGE, null);
        }
        // Before anything starts: a sluice.* setting no process reads (a typo) stops the start, naming it.
        builder.listeners(new KnownSettings());
        try
        {
            return new Launch(EXIT_OK, builder.run(rest));
        }
        catch (final RuntimeException | Error e)
        {
            err.println(StartupFailure.describe(e, effectivePorts(rest)));
            return new Launch(EXIT_STARTUP_FAILED, null);
        }
    }

    private static boolean asksForHelp(final String[] args)
    {
        if (args.length > 0 && "help".equals(args[0]))
        {
            return true;
        }
        for (final String arg : args)
        {
            if ("--help".equals(arg) || "-h".equals(arg))
            {
                return true;
            }
        }
        return false;
    }

    /** The HTTP ports as configured, to say which setting names a port in use. */
    private static Map<String, Integer> effectivePorts(final String[] args)
    {
        final StandardEnvironment environment = new StandardEnvironment();
        environment.getPropertySources().addFirst(new SimpleCommandLinePropertySource(args));
        final Map<String, Integer> ports = new LinkedHashMap<>();
        try
        {
            ports.put("server.port", environment.getProperty("server.port", Integer.class, 8080));
            ports.put("management.server.port", environment.getProperty("management.server.port", Integer.class, 9600));
        }
        catch (final RuntimeException ignored)
        {
            // An unparsable port is reported by the binding failure itself.
        }
        return ports;
    }
}
