// Validates Kubernetes manifests against the OpenAPI schemas of npm kubernetes-models: wrong types
// (a string where an integer goes) and missing required fields, which the fabric8 model lets through.
// Usage: node validate.mjs FILE.yaml...; prints one line per document; exit 1 when any is invalid.
import { readFileSync } from "node:fs";
import { basename } from "node:path";
import { parseAllDocuments } from "yaml";

let failures = 0;
for (const file of process.argv.slice(2)) {
  const documents = parseAllDocuments(readFileSync(file, "utf8"));
  for (const [index, document] of documents.entries()) {
    const where = `${basename(file)}#${index}`;
    if (document.errors.length > 0) {
      console.log(`error ${where}: YAML: ${document.errors[0].message}`);
      failures++;
      continue;
    }
    const object = document.toJS();
    if (object === null || object === undefined) {
      continue;
    }
    const name = `${object.kind}/${object.metadata?.name}`;
    let Model;
    try {
      ({ [object.kind]: Model } = await import(`kubernetes-models/${object.apiVersion}/${object.kind}`));
    } catch (error) {
      console.log(`error ${where} ${name}: no schema for ${object.apiVersion} ${object.kind}`);
      failures++;
      continue;
    }
    try {
      new Model(object).validate();
      console.log(`ok ${where} ${name}`);
    } catch (error) {
      console.log(`error ${where} ${name}: ${String(error.message).replace(/\s+/g, " ")}`);
      failures++;
    }
  }
}
process.exit(failures === 0 ? 0 : 1);
