/**
 * A throwaway self-signed certificate for the loopback Vertex AI stand-in (127.0.0.1 and
 * localhost), made with openssl at test time. Other processes trust it through
 * NODE_EXTRA_CA_CERTS=<certFile>; this process through `trustCertificate`.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import tls from "node:tls";

export interface StandinCert {
  key: string;
  cert: string;
  /** PEM file to pass as NODE_EXTRA_CA_CERTS. */
  certFile: string;
}

export function makeSelfSignedCert(dir = mkdtempSync(path.join(tmpdir(), "vertex-standin-"))): StandinCert {
  const keyFile = path.join(dir, "key.pem");
  const certFile = path.join(dir, "cert.pem");
  try {
    execFileSync(
      "openssl",
      [
        "req",
        "-x509",
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:prime256v1",
        "-nodes",
        "-keyout",
        keyFile,
        "-out",
        certFile,
        "-days",
        "2",
        "-subj",
        "/CN=127.0.0.1",
        "-addext",
        "subjectAltName=IP:127.0.0.1,DNS:localhost",
        "-addext",
        "basicConstraints=critical,CA:TRUE",
      ],
      { stdio: "pipe" },
    );
  } catch (err) {
    throw new Error(
      `Could not create the stand-in's certificate with openssl (install openssl): ${String(err)}`,
      { cause: err },
    );
  }
  return { key: readFileSync(keyFile, "utf8"), cert: readFileSync(certFile, "utf8"), certFile };
}

/** Makes this process's TLS clients (fetch included) trust `pem` besides the usual roots. */
export function trustCertificate(pem: string): void {
  const current = tls.getCACertificates("default");
  if (!current.includes(pem)) tls.setDefaultCACertificates([...current, pem]);
}
