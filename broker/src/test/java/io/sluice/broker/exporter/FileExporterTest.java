package io.sluice.broker.exporter;

import io.sluice.exporter.spi.CommittedRecord;
import io.sluice.exporter.spi.ExporterContext;
import org.agrona.DirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/** Every exported line is one JSON object written by an encoder, whatever the stored payload holds. */
class FileExporterTest
{
    private static final JsonMapper JSON = new JsonMapper();

    @TempDir
    Path dir;

    @Test
    void aStoredPayloadThatIsNotJsonIsExportedAsAStringAndForgesNoLine() throws Exception
    {
        final String forged = "1}\n{\"partitionId\":2,\"position\":999999,\"key\":\"x\",\"timestamp\":1,\"payload\":{}";
        final List<Long> acknowledged = export(
            record(1, "order-1", "{\"amount\":1.10,\"big\":123456789012345678901234567890}"),
            record(2, "quote\"and\nnewline", forged),
            record(3, null, ""));

        final List<String> lines = Files.readAllLines(dir.resolve("partition-7.jsonl"));
        assertThat(lines).hasSize(3);
        assertThat(lines.get(0)).isEqualTo("{\"partitionId\":7,\"position\":1,\"key\":\"order-1\",\"timestamp\":1764420000000," +
            "\"payload\":{\"amount\":1.10,\"big\":123456789012345678901234567890}}");
        final JsonNode second = JSON.readTree(lines.get(1));
        assertThat(second.get("partitionId").asInt()).isEqualTo(7);
        assertThat(second.get("position").asLong()).isEqualTo(2);
        assertThat(second.get("key").asString()).isEqualTo("quote\"and\nnewline");
        assertThat(second.get("payload").asString()).isEqualTo(forged);
        assertThat(lines.get(2)).isEqualTo(
            "{\"partitionId\":7,\"position\":3,\"key\":null,\"timestamp\":1764420000000,\"payload\":null}");
        assertThat(acknowledged).containsExactly(1L, 2L, 3L);
    }

    private List<Long> export(final CommittedRecord... records) throws Exception
    {
        final List<Long> acknowledged = new ArrayList<>();
        final FileExporter exporter = new FileExporter();
        exporter.configure(new ExporterContext("file", 7, 0, dir, Map.of(FileExporter.PATH_PROPERTY, dir.toString())));
        exporter.open(acknowledged::add);
        for (final CommittedRecord record : records)
        {
            exporter.export(record);
        }
        exporter.close();
        return acknowledged;
    }

    private static CommittedRecord record(final long position, final String key, final String payload)
    {
        final byte[] keyBytes = key == null ? new byte[0] : key.getBytes(StandardCharsets.UTF_8);
        final byte[] payloadBytes = payload.getBytes(StandardCharsets.UTF_8);
        final byte[] all = new byte[3 + keyBytes.length + payloadBytes.length];
        System.arraycopy(keyBytes, 0, all, 3, keyBytes.length);
        System.arraycopy(payloadBytes, 0, all, 3 + keyBytes.length, payloadBytes.length);
        final UnsafeBuffer buffer = new UnsafeBuffer(all);
        return new CommittedRecord()
        {
            public int partitionId()
            {
                return 7;
            }

            public long position()
            {
                return position;
            }

            public long timestamp()
            {
                return 1_764_420_000_000L;
            }

            public String key()
            {
                return key;
            }

            public DirectBuffer buffer()
            {
                return buffer;
            }

            public int keyOffset()
            {
                return 3;
            }

            public int keyLength()
            {
                return key == null ? -1 : keyBytes.length;
            }

            public int payloadOffset()
            {
                return 3 + keyBytes.length;
            }

            public int payloadLength()
            {
                return payloadBytes.length;
            }
        };
    }
}
