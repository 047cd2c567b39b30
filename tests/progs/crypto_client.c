/* SPDX-License-Identifier: MIT */
/* OpenSSL's libcrypto used through its harder declarations
 * (tests/test_libraries.py): a function returning a function pointer
 * (BIO_meth_get_write) and one taking pointers to function pointers
 * (EC_KEY_METHOD_get_keygen). Linked to the shim and to -lcrypto alike;
 * the outputs must match. */
#include <openssl/bio.h>
#include <openssl/crypto.h>
#include <openssl/ec.h>
#include <openssl/evp.h>
#include <stdio.h>

static int our_write(BIO *b, const char *data, int len)
{
    (void)b;
    (void)data;
    return len;
}

int main(void)
{
    printf("version %s\n", OpenSSL_version(OPENSSL_VERSION));
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int n = 0;
    if (!EVP_Digest("abc", 3, md, &n, EVP_sha256(), NULL)) {
        printf("EVP_Digest failed\n");
        return 1;
    }
    printf("sha256(abc) ");
    for (unsigned int i = 0; i < n; i++)
        printf("%02x", md[i]);
    printf("\n");
    BIO_METHOD *m = BIO_meth_new(BIO_TYPE_SOURCE_SINK, "lazy");
    BIO_meth_set_write(m, our_write);
    int (*w)(BIO *, const char *, int) = BIO_meth_get_write(m);
    printf("the method's write is ours %d\n", w == our_write);
    BIO_meth_free(m);
    int (*keygen)(EC_KEY *) = NULL;
    EC_KEY_METHOD_get_keygen(EC_KEY_get_default_method(), &keygen);
    printf("default keygen set %d\n", keygen != NULL);
    return 0;
}
