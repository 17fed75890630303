package io.sluice.cli;

import picocli.CommandLine;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import java.nio.file.Path;
import java.time.Duration;

/** Options every admin command shares (CONTRACT §6), mixed into each leaf command. */
public final class GatewayOptions
{
    public static final String DEFAULT_GATEWAY = "http://127.0.0.1:9600";
    public static final String GATEWAY_ENV = "SLUICE_GATEWAY";
    public static final String TOKEN_ENV = "SLUICE_TOKEN";
    public static final String CA_CERT_ENV = "SLUICE_CA_CERT";

    @Spec(Spec.Target.MIXEE)
    CommandSpec spec;

    @Option(
        names = "--gateway",
        paramLabel = "URL",
        description = "Management URL of the gateway (default: $" + GATEWAY_ENV + " or " + DEFAULT_GATEWAY + ").")
    String gateway;

    @Option(
        names = "--token",
        paramLabel = "TOKEN",
        description = "Management token, sent as 'Authorization: Bearer' (default: $" + TOKEN_ENV + ").")
    String token;

    @Option(
        names = "--ca-cert",
        paramLabel = "FILE",
        description = "PEM bundle of the CAs to trust for an https:// gateway, instead of the JVM's (default: $" +
            CA_CERT_ENV + ").")
    Path caCert;

    @Option(
        names = "--timeout",
        paramLabel = "DURATION",
        defaultValue = "30s",
        converter = DurationConverter.class,
        description = "How long to wait for one answer of the gateway, e.g. 500ms, 30s (default: ${DEFAULT-VALUE}).")
    Duration timeout;

    @Option(
        names = {"--output", "-o"},
        paramLabel = "FORMAT",
        defaultValue = "table",
        description = "table or json (json prints the gateway's answer) (default: ${DEFAULT-VALUE}).")
    OutputFormat output;

    public ManagementClient connect(final CliConsole console)
    {
        final String url = gateway != null ? gateway : orDefault(console.env().apply(GATEWAY_ENV), DEFAULT_GATEWAY);
        final String bearer = token != null ? token : console.env().apply(TOKEN_ENV);
        final String caFromEnv = console.env().apply(CA_CERT_ENV);
        final Path ca = caCert != null ? caCert : caFromEnv == null || caFromEnv.isBlank() ? null : Path.of(caFromEnv);
        try
        {
            return new ManagementClient(url, bearer == null || bearer.isBlank() ? null : bearer, timeout, ca);
        }
        catch (final IllegalArgumentException ex)
        {
            throw new CommandLine.ParameterException(spec.commandLine(), ex.getMessage(), ex);
        }
    }

    public OutputFormat output()
    {
        return output;
    }

    public Duration timeout()
    {
        return timeout;
    }

    private static String orDefault(final String value, final String fallback)
    {
        return value == null || value.isBlank() ? fallback : value;
    }
}
