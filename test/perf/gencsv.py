#!/usr/bin/env python3
# test/perf/gencsv.py OUT ROWS: the synthetic Danish-style CSV (semicolon,
# decimal comma) that files.sh and heldback.sh apply, the same rows for the
# same ROWS (seeded).
import random, sys

random.seed(1)
with open(sys.argv[1], 'w') as f:
    f.write('Sorterings ID;Navn DK;Navn DE/ENG;Global Opvarmning, modul A1-A3;Deklareret enhed (FU);Masse faktor\n')
    for i in range(int(sys.argv[2])):
        v = ('%.3f' % random.uniform(-50, 900)).replace('.', ',')
        f.write(f'#T{i:06d};Produkt {i} beton klasse {i%40};Product {i};{v};m3;{random.randint(100,2500)}\n')
