package com.example.audit;

import io.sluice.exporter.spi.CommittedRecord;
import io.sluice.exporter.spi.Exporter;
import io.sluice.exporter.spi.ExporterConfigException;
import io.sluice.exporter.spi.ExporterContext;
import io.sluice.exporter.spi.ExporterController;
import io.sluice.exporter.spi.RecordJson;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;

/**
 * A third-party exporter as an operator would write one, compiled by tests into a jar of its own: it appends each
 * record's JSON line to {@code <args.out>/partition-<id>.jsonl} and acknowledges it, and on open writes
 * {@code <args.out>/probe-<partition>.txt}: which classes its class loader can see, and its args.
 */
public class AuditExporter implements Exporter
{
    /** Classes a third-party exporter must see (the SPI, Agrona, the JDK) or must not (the broker and its libraries). */
    private static final List<String> PROBED = List.of(
        "io.sluice.exporter.spi.RecordJson", "org.agrona.DirectBuffer", "java.net.http.HttpClient",
        "io.sluice.broker.Broker", "io.sluice.broker.exporter.FileExporter", "io.sluice.protocol.codecs.ExportingState",
        "org.slf4j.LoggerFactory", "org.apache.ratis.server.RaftServer", "org.apache.kafka.clients.producer.KafkaProducer");

    private Path out;
    private Path file;
    private ExporterContext context;
    private ExporterController controller;

    @Override
    public void configure(final ExporterContext context)
    {
        final String dir = context.args().get("out");
        if (dir == null || dir.isBlank())
        {
            throw new ExporterConfigException("args.out", "required: the folder the audit exporter writes to");
        }
        this.context = context;
        this.out = Path.of(dir);
        this.file = out.resolve("partition-" + context.partitionId() + ".jsonl");
    }

    @Override
    public void open(final ExporterController controller) throws IOException
    {
        this.controller = controller;
        final StringBuilder probe = new StringBuilder();
        for (final String name : PROBED)
        {
            probe.append(name).append('=').append(visible(name, getClass().getClassLoader())).append(' ')
                .append(visible(name, Thread.currentThread().getContextClassLoader())).append('\n');
        }
        probe.append("args=").append(context.args()).append('\n');
        Files.createDirectories(out);
        Files.writeString(out.resolve("probe-" + context.partitionId() + ".txt"), probe.toString());
    }

    @Override
    public void export(final CommittedRecord record) throws IOException
    {
        final String line = new String(RecordJson.toBytes(record), StandardCharsets.UTF_8) + "\n";
        Files.writeString(file, line, StandardOpenOption.CREATE, StandardOpenOption.APPEND);
        controller.acknowledge(record.position());
    }

    @Override
    public void close()
    {
    }

    private static String visible(final String name, final ClassLoader loader)
    {
        try
        {
            Class.forName(name, false, loader);
            return "visible";
        }
        catch (final ClassNotFoundException | LinkageError e)
        {
            return "hidden";
        }
    }
}
